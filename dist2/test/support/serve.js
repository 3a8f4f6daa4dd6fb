/**
 * `agentledger serve` as a child process on a free port, reading the test's
 * database as the read-only test user, and GETs against it.
 */
import { TEST_READONLY_USER } from './services.js';
import { runCli, until } from './processes.js';
/** The settings that make serve read `env`'s database as agentledger_test_readonly. */
export function serveEnv(env, extra = {}) {
    return {
        ...env,
        AGENTLEDGER_SERVE_CLICKHOUSE_USER: TEST_READONLY_USER.user,
        AGENTLEDGER_SERVE_CLICKHOUSE_PASSWORD: TEST_READONLY_USER.password,
        // The `serving url=…` line is at info.
        AGENTLEDGER_LOG_LEVEL: 'info',
        ...extra,
    };
}
/** Starts serve on port 0 (any free one) and waits for its `serving url=` line. */
export async function startServe(env, extra = {}) {
    const running = runCli(['serve', '--port', '0'], serveEnv(env, extra));
    const origin = await until('serve prints its address', 30_000, () => {
        const m = /serving url=(http:\/\/127\.0\.0\.1:\d+)\//.exec(running.stderr());
        if (m)
            return Promise.resolve(m[1]);
        return running.child.exitCode === null ? Promise.resolve(undefined) : Promise.reject(new Error(`serve exited: ${running.stderr()}`));
    }, [running]);
    return {
        origin,
        running,
        async stop() {
            running.child.kill('SIGTERM');
            return running.exited;
        },
    };
}
//# sourceMappingURL=serve.js.map