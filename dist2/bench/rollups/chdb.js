/** The same reads on ClickHouse 25.8 through chdb (bench/rollups_chdb.py). */
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { say } from './options.js';
import { children, REPO, rows } from './helpers.js';
/** The chdb interpreter test/modern/run.sh installs: its venv, or python3 with its --target folder. */
export function chdbPython() {
    const venv = join(REPO, '.state', 'venv-chdb');
    if (existsSync(join(venv, '.chdb-stamp')) && existsSync(join(venv, 'bin', 'python')))
        return { cmd: join(venv, 'bin', 'python'), env: {} };
    const pkgs = join(REPO, '.state', 'chdb-pkgs');
    if (existsSync(join(pkgs, '.chdb-stamp')))
        return { cmd: 'python3', env: { PYTHONPATH: pkgs } };
    return undefined;
}
export async function runChdb(spec, work) {
    const py = chdbPython();
    if (py === undefined)
        throw new Error('chdb is not installed: run `bash test/modern/run.sh` once (it installs chdb 3.7.2 into .state/)');
    const specPath = join(work, 'chdb-spec.json');
    await writeFile(specPath, JSON.stringify(spec));
    const script = join(REPO, 'bench', 'rollups_chdb.py');
    const child = spawn(py.cmd, [script, specPath], { env: { ...process.env, ...py.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let out = '';
    let partial = '';
    child.stdout.on('data', (d) => (out += d.toString()));
    child.stderr.on('data', (d) => {
        const lines = (partial + d.toString()).split('\n');
        partial = lines.pop() ?? '';
        for (const l of lines)
            if (l.trim() !== '')
                say(`25.8: ${l}`);
    });
    const code = await new Promise((resolve) => child.on('exit', resolve));
    children.delete(child);
    if (partial.trim() !== '')
        say(`25.8: ${partial}`);
    if (code !== 0)
        throw new Error(`bench/rollups_chdb.py exited with ${code}`);
    return JSON.parse(out);
}
/** Copies each non-empty table the rollup job wrote (not envelopes: 25.8 loads its own) to TSV, for the 25.8 reads of the rollup views. */
export async function exportRollupTables(ch, work) {
    const tables = await rows(ch, `SELECT name, engine FROM system.tables WHERE database = currentDatabase() AND engine LIKE '%MergeTree' AND name NOT IN ('envelopes', 'schema_migrations') ORDER BY name`);
    const copies = [];
    for (const { name, engine } of tables) {
        // A ReplacingMergeTree is copied as readers see it (FINAL): 25.8 would
        // collapse its replaced rows within the one insert anyway.
        const from = engine.startsWith('Replacing') ? `${name} FINAL` : name;
        const [count] = await rows(ch, `SELECT count() AS n FROM ${from}`);
        if (Number(count?.n ?? 0) === 0)
            continue;
        // DESCRIBE lists the columns in order (18.16's system.columns has no position).
        const columns = await rows(ch, `DESCRIBE TABLE ${name}`);
        const path = join(work, `${name}.tsv`);
        const result = await ch.exec({ query: `SELECT * FROM ${from} FORMAT TabSeparated` });
        await pipeline(result.stream, createWriteStream(path));
        copies.push({ table: name, structure: columns.map((c) => `${c.name} ${c.type}`).join(', '), path, rows: Number(count?.n) });
    }
    return copies;
}
//# sourceMappingURL=chdb.js.map