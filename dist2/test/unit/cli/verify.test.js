/**
 * `agentledger verify` on hostile input, through the real CLI (no services):
 * a line over the cap, from a file and from stdin, is one malformed verdict
 * and the chains around it still verify; ids and details in the text output
 * are escaped.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { MAX_LINE_BYTES } from '../../../src/sources/lines.js';
import { BIN } from '../../support/processes.js';
const HONEST = fileURLToPath(new URL('../../../../test/fixtures/envelopes/honest.jsonl', import.meta.url));
const dir = await mkdtemp(join(tmpdir(), 'verify-hostile-'));
after(() => rm(dir, { recursive: true, force: true }));
/** Runs the CLI, optionally writing `stdin` chunk by chunk (the same chunk `times` times). */
async function verify(args, stdin) {
    const child = spawn(process.execPath, [BIN, 'verify', ...args], { env: { PATH: process.env['PATH'] ?? '' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d.toString()));
    child.stderr.on('data', (d) => (stderr += d.toString()));
    const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    const write = (data) => new Promise((resolve, reject) => child.stdin.write(data, (err) => (err ? reject(err) : resolve())));
    if (stdin) {
        await write(stdin.before);
        for (let i = 0; i < stdin.times; i++)
            await write(stdin.chunk);
        await write(stdin.after);
    }
    child.stdin.end();
    return { code: await exited, stdout, stderr };
}
const honest = (await readFile(HONEST, 'utf8')).trimEnd().split('\n');
const baseline = JSON.parse((await verify([HONEST, '--json'])).stdout);
test('the honest fixture verifies (the baseline for the cases below)', () => {
    assert.deepEqual([baseline.envelopes, baseline.ok, baseline.violations.length], [honest.length, honest.length, 0]);
});
test('a file with a line one byte over the cap: one malformed verdict naming the line, every chain around it verifies, exit 1', async () => {
    const file = join(dir, 'over-cap.jsonl');
    const cut = 1000;
    const huge = `{"LoopID":"huge","Payload":"${'A'.repeat(MAX_LINE_BYTES + 1 - 30)}"}`;
    assert.equal(Buffer.byteLength(huge), MAX_LINE_BYTES + 1);
    await writeFile(file, [...honest.slice(0, cut), huge, ...honest.slice(cut)].join('\n') + '\n');
    const run = await verify([file, '--json']);
    assert.equal(run.code, 1, run.stderr);
    assert.equal(run.stderr, '');
    const got = JSON.parse(run.stdout);
    assert.deepEqual([got.loops, got.envelopes, got.ok, got.duplicates], [baseline.loops, baseline.envelopes + 1, baseline.ok, 0]);
    assert.deepEqual(got.violations, [{ loopId: '', seq: 0, verdict: 'malformed', detail: `${file}:${cut + 1}: line of ${MAX_LINE_BYTES + 1} bytes exceeds the 16 MiB cap` }]);
});
test('stdin: a 64 MiB line is reported and skipped without a stack trace; the lines after it are read', async () => {
    const chunk = Buffer.alloc(1024 * 1024, 0x41);
    const run = await verify(['-', '--json'], { before: honest.slice(0, 10).join('\n') + '\n{"LoopID":"', chunk, times: 64, after: '"}\n' + honest.slice(10).join('\n') + '\n' });
    assert.equal(run.code, 1, run.stderr);
    assert.equal(run.stderr, '', 'no stack trace, no error');
    const got = JSON.parse(run.stdout);
    assert.deepEqual([got.loops, got.envelopes, got.ok], [baseline.loops, baseline.envelopes + 1, baseline.ok]);
    assert.deepEqual(got.violations.map((v) => v.detail), [`-:11: line of ${64 * 1024 * 1024 + 13} bytes exceeds the 16 MiB cap`]);
});
test('text output escapes control characters in ids and details', async () => {
    const file = join(dir, 'escapes.jsonl');
    // Malformed records: the verdict lines carry the LoopID as read.
    const id = 'evil\u001b]0;pwned\u0007\u001b[2J\r\n\u0000\u2028end\\';
    await writeFile(file, `${JSON.stringify({ LoopID: id, Seq: 1 })}\n${JSON.stringify({ LoopID: 'x', Seq: 1, Kind: '\u001b[31m' })}\n`);
    const run = await verify([file]);
    assert.equal(run.code, 1, run.stderr);
    assert.doesNotMatch(run.stdout, /[^\P{Cc}\n]|[\u2028\u2029]/u, 'no control character but the line ends');
    assert.ok(run.stdout.includes(' evil\\x1b]0;pwned\\x07\\x1b[2J\\r\\n\\x00\\u2028end\\\\ seq 1: '), run.stdout);
    assert.equal(run.stdout.trimEnd().split('\n').length, 3, 'a summary and one row per violation');
    // --json carries the id exactly.
    const json = JSON.parse((await verify([file, '--json'])).stdout);
    assert.equal(json.violations[0]?.loopId, id);
});
//# sourceMappingURL=verify.test.js.map