/**
 * Runs the CLI of this build to its end and keeps everything it printed:
 * for tests about what a command says (its one error line, no secret).
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { BIN } from './processes.js';
export function runToEnd(args, env, options = {}) {
    return new Promise((resolve) => {
        const child = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env['PATH'] ?? '', ...env }, cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        let killed = false;
        child.stdout.on('data', (d) => (stdout += d.toString()));
        child.stderr.on('data', (d) => (stderr += d.toString()));
        // A safety net, not a timing assertion: a hung command fails its test instead of the run.
        const timer = setTimeout(() => {
            killed = true;
            child.kill('SIGKILL');
        }, options.timeoutMs ?? 60_000);
        child.on('close', (code) => {
            clearTimeout(timer);
            resolve({ code: killed ? 'killed' : (code ?? 'killed'), stdout, stderr });
        });
    });
}
/** A TCP port on 127.0.0.1 that nothing listens on (it was free a moment ago): connections to it are refused at once. */
export async function closedPort() {
    const server = createServer();
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address();
    await new Promise((r) => server.close(() => r()));
    return port;
}
//# sourceMappingURL=cli-run.js.map