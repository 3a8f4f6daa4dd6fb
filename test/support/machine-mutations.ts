/**
 * Proof that every exactly-once rule of src/ingest/machine.ts is tested:
 * removes each rule in turn (one textual mutation per rule, below), and runs
 * test/unit/ingest/machine.test.ts and ingestor.test.ts against the mutant.
 * A mutation that no test notices is a rule without a test: the script says
 * so and exits 1.
 *
 *   npm run build && node dist/test/support/machine-mutations.js [name…]
 *
 * The mutant runs from dist-mutant/ (a copy of dist/ at the same depth, so
 * the tests' paths to test/fixtures/ hold); about 5 s per mutation.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type * as TypeScript from 'typescript';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const MUTANT = `${ROOT}dist-mutant/`;

/** Each rule, and the text that keeps it -> the text without it. */
export const MUTATIONS: readonly { readonly rule: string; readonly keeps: string; readonly without: string }[] = [
  {
    rule: 'a partition is read back before it is judged',
    keeps: "if (session.next === undefined) return { state, commands: [{ type: 'readBack'",
    without: "if (false) return { state, commands: [{ type: 'readBack'",
  },
  { rule: 'a redelivery does not move the progress back', keeps: 'const next = after > e.from ? after : e.from;', without: 'const next = after;' },
  {
    rule: 'the fence before the write',
    keeps: "const commands: Command[] = [{ type: 'seal', buffer: open.id }, fence(s, open)];",
    without: "const commands: Command[] = [{ type: 'seal', buffer: open.id }, { type: 'write', buffer: open.id }];",
  },
  { rule: 'the fence commits the durable positions', keeps: '.map((tp) => s.sessions.get(tp)?.durable)', without: '.map(() => undefined as Position | undefined)' },
  {
    rule: 'a refused fence drops everything held',
    keeps: 'const dropped = dropAll(s, s.phase);\n      return { state: { ...dropped.state, fenced: true }, commands: dropped.commands };',
    without: 'return { state: { ...s, fenced: true, flight: undefined }, commands: [] };',
  },
  {
    rule: 'the commit only after the write',
    keeps: "commands: [{ type: 'write', buffer: e.buffer }] };",
    without: "commands: [{ type: 'commit', buffer: e.buffer, positions: [...s.flight.buffer.positions.values()] }, { type: 'write', buffer: e.buffer }] };",
  },
  {
    rule: 'no commit for a dropped buffer',
    keeps: "if (!isFlight(s, e.buffer) || s.flight.step !== 'writing') return { state: s, commands: [] };\n  const metadata",
    without:
      "if (s.flight === undefined) return { state: s, commands: [{ type: 'commit', buffer: e.buffer, positions: [...s.open.positions.values()].map((p) => ({ ...p, metadata: String(e.stampSeconds) })) }] };\n  if (!isFlight(s, e.buffer) || s.flight.step !== 'writing') return { state: s, commands: [] };\n  const metadata",
  },
  {
    rule: 'one flight at a time',
    keeps: "if (running(flight)) return { state: s, commands: due || e.force ? [{ type: 'await', buffer: flight.buffer.id }] : [] };",
    without: 'if (running(flight)) return flushCheck({ ...s, flight: undefined }, e, limits);',
  },
  {
    rule: 'a failed flight first',
    keeps: "if (flight.step === 'failed') {",
    without: "if (flight.step === 'failed') return flushCheck({ ...s, flight: undefined }, e, limits);\n    if (flight.step === ('x' as string)) {",
  },
  {
    rule: 'a batch judged in a session thrown away is not buffered',
    keeps: 'const session = current(s, e.tp, e.session);\n  // Judged',
    without: 'const session = s.sessions.get(e.tp);\n  // Judged',
  },
  { rule: 'the rewind after refused rows', keeps: 'if (open.starts.size === 0) return', without: 'if (open.starts.size >= 0) return' },
  {
    rule: 'an assignment drops what was held',
    keeps: "const dropped = dropAll(s, s.phase === 'stopping' ? 'stopping' : 'owning');",
    without: "const dropped: Step = { state: { ...s, phase: s.phase === 'stopping' ? 'stopping' : 'owning' }, commands: [] };",
  },
  {
    rule: 'a loss drops what was held',
    keeps: "case 'lost':\n      // Leaving to join again: the next owner of each partition, this member or another, reads it back.\n      return dropAll(s, s.phase === 'stopping' ? 'stopping' : 'revoked');",
    without: "case 'lost':\n      return { state: { ...s, phase: 'revoked' }, commands: [] };",
  },
  {
    rule: "a revocation stops the timer's flushes",
    keeps: "return { state: s.phase === 'stopping' ? s : { ...s, phase: 'revoked' }, commands: [] };",
    without: 'return { state: s, commands: [] };',
  },
  {
    rule: 'a refused commit fences',
    keeps: "return over(e.type === 'commitFailed' ? { ...s, fenced: true } : s, s.flight, e.type === 'committed');",
    without: "return over(s, s.flight, e.type === 'committed');",
  },
  { rule: 'filtered records move a position forward only', keeps: 'if (e.filtered && after <= e.from) return { state: s, commands: [] };', without: '' },
  { rule: 'no timer flush while fenced', keeps: "if (e.fromTimer && (s.phase !== 'owning' || s.fenced)) return", without: "if (e.fromTimer && s.phase !== 'owning') return" },
  { rule: 'no batch once stopping', keeps: "if (s.phase === 'stopping' || (e.filtered && !s.sessions.has(tp)))", without: 'if (e.filtered && !s.sessions.has(tp))' },
  {
    rule: 'a commit becomes what the next fence commits',
    keeps: 'if (session) state = withSession(state, tp, { ...session, durable: c });',
    without: 'if (session) state = withSession(state, tp, session);',
  },
];

/** Failing tests of one compiled test file, by name. */
function failing(file: string): string[] {
  const run = spawnSync(process.execPath, ['--test', '--test-reporter=tap', file], { encoding: 'utf8', timeout: 600_000 });
  return run.stdout
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('not ok') && !l.includes('.test.js'))
    .map((l) => l.replace(/^not ok \d+ - /, ''));
}

function main(only: readonly string[]): number {
  const require = createRequire(import.meta.url);
  const ts = require('typescript') as typeof TypeScript;
  const source = readFileSync(`${ROOT}src/ingest/machine.ts`, 'utf8');
  rmSync(MUTANT, { recursive: true, force: true });
  cpSync(`${ROOT}dist/`, MUTANT, { recursive: true });
  const target = `${MUTANT}src/ingest/machine.js`;
  let survivors = 0;
  try {
    for (const { rule, keeps, without } of MUTATIONS) {
      if (only.length > 0 && !only.some((o) => rule.includes(o))) continue;
      const at = source.indexOf(keeps);
      if (at < 0 || source.indexOf(keeps, at + 1) >= 0) {
        process.stdout.write(`! ${rule}: its text is not in machine.ts once (update the mutation)\n`);
        survivors++;
        continue;
      }
      const mutant = source.slice(0, at) + without + source.slice(at + keeps.length);
      writeFileSync(target, ts.transpileModule(mutant, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText);
      const failed = [...failing(`${MUTANT}test/unit/ingest/machine.test.js`), ...failing(`${MUTANT}test/unit/ingest/ingestor.test.js`)];
      if (failed.length === 0) survivors++;
      process.stdout.write(`${failed.length > 0 ? 'caught' : 'SURVIVED'}  ${rule}${failed.length > 0 ? `: ${failed.length} test(s) fail, first "${failed[0]!.slice(0, 90)}"` : ''}\n`);
    }
  } finally {
    rmSync(MUTANT, { recursive: true, force: true });
  }
  process.stdout.write(survivors === 0 ? 'every rule removed fails a test\n' : `${survivors} rule(s) removed without a test failing\n`);
  return survivors === 0 ? 0 : 1;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
