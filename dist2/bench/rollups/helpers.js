/** What the steps share: running the CLI, reading rows, waiting for merges and mutations, the migrations. */
import { spawn } from 'node:child_process';
import { copyFile, mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { say } from './options.js';
/** Spawned children still running: stopped on the way out, whatever happens. */
export const children = new Set();
export const REPO = new URL('../../../', import.meta.url).pathname;
/**
 * Runs the CLI of this same build (dist/src/cli/main.js, two folders up),
 * not bin/agentledger.js, which loads dist/ and may be another build.
 */
export const CLI_MAIN = new URL('../../src/cli/main.js', import.meta.url).href;
export function cli(argv, e, onErrLine) {
    const launcher = `const { main } = await import(${JSON.stringify(CLI_MAIN)}); process.exitCode = await main(process.argv.slice(1));`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', launcher, '--', ...argv], { env: e, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let out = '';
    let err = '';
    let partial = '';
    child.stdout.on('data', (d) => (out += d.toString()));
    child.stderr.on('data', (d) => {
        const text = d.toString();
        err += text;
        if (err.length > 200_000)
            err = err.slice(-100_000);
        if (onErrLine) {
            const lines = (partial + text).split('\n');
            partial = lines.pop() ?? '';
            for (const l of lines)
                onErrLine(l);
        }
    });
    const done = new Promise((resolve) => {
        child.on('exit', (code) => {
            children.delete(child);
            resolve({ code, out, err });
        });
    });
    return { child, done };
}
export async function rows(ch, query) {
    return ch.query({ query, format: 'JSONEachRow' }).then((r) => r.json());
}
export async function settleMerges(ch, capS) {
    for (let i = 0; i < capS; i++) {
        const [m] = await rows(ch, 'SELECT count() AS n FROM system.merges');
        if (Number(m?.n) === 0)
            return;
        await new Promise((r) => setTimeout(r, 1000));
    }
    say(`ClickHouse merges still running after ${capS} s; going on`);
}
export async function waitMutations(ch) {
    for (let i = 0; i < 1200; i++) {
        const [m] = await rows(ch, 'SELECT count() AS n FROM system.mutations WHERE database = currentDatabase() AND is_done = 0');
        if (Number(m?.n) === 0)
            return;
        await new Promise((r) => setTimeout(r, 500));
    }
}
/**
 * The project's migrations folder, or, when its numbering has a hole (a
 * migration being written elsewhere), a copy renumbered in order: migrate()
 * refuses a hole, and this database is thrown away anyway. Said in the output.
 */
export async function migrationsDir(work) {
    const files = (await readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith('.sql')).sort();
    const versions = files.map((f) => Number(f.slice(0, 4)));
    if (versions.every((v, i) => v === i + 1))
        return { dir: MIGRATIONS_DIR, note: `${files.length} migrations` };
    const dir = join(work, 'migrations');
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir);
    const renamed = [];
    for (const [i, f] of files.entries()) {
        const to = `${String(i + 1).padStart(4, '0')}${f.slice(4)}`;
        if (to !== f)
            renamed.push(`${f} as ${to.slice(0, 4)}`);
        await copyFile(join(MIGRATIONS_DIR, f), join(dir, to));
    }
    return { dir, note: `${files.length} migrations; schema/clickhouse has a hole in its numbering, so they were applied renumbered (${renamed.join(', ')})` };
}
//# sourceMappingURL=helpers.js.map