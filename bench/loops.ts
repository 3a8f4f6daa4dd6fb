/**
 * `loops --limit N` and `loops --root R` on a database left by
 * `npm run bench:rollups -- ... --keep` (rollups rebuilt, so a sweep is
 * recorded): the read of every loop (listLoopsFromAll, what `loops` did
 * before) against the read of the printed loops' trees (listLoops), timed,
 * and their answers compared byte for byte.
 *
 *   npx tsc -p tsconfig.json && node dist/bench/loops.js --database D [--runs 3]
 *
 * The roots timed: the root of the largest tree loop_roots holds, and one of
 * one loop. Reads as AGENTLEDGER_CLICKHOUSE_* from the environment, with D.
 */
import { parseArgs } from 'node:util';
import { parseConfig } from '../src/config/index.js';
import { listLoops, listLoopsFromAll, type LoopsQuery } from '../src/read/loops.js';
import { createClickHouse } from '../src/clickhouse/client.js';

const { values } = parseArgs({ options: { database: { type: 'string' }, runs: { type: 'string', default: '3' } } });
if (values.database === undefined) throw new Error('--database D: a database left by bench:rollups --keep');
const config = parseConfig({ ...process.env, AGENTLEDGER_CLICKHOUSE_DATABASE: values.database });
const ch = createClickHouse(config.clickhouse);
const runs = Number(values.runs);

const time = async <T>(f: () => Promise<T>): Promise<{ ms: number; out: T }> => {
  const t = performance.now();
  const out = await f();
  return { ms: performance.now() - t, out };
};

try {
  const [big] = await ch
    .query({ query: 'SELECT root_loop_id AS r, count() AS n FROM loop_roots FINAL GROUP BY r ORDER BY n DESC, r LIMIT 1', format: 'JSONEachRow' })
    .then((r) => r.json<{ r: string; n: string }>());
  const [lone] = await ch
    .query({ query: 'SELECT loop_id AS r FROM envelopes WHERE kind_class = \'LoopStarted\' AND parent_loop_id = \'\' ORDER BY loop_id DESC LIMIT 1', format: 'JSONEachRow' })
    .then((r) => r.json<{ r: string }>());
  const queries: [string, LoopsQuery][] = [
    ['loops --limit 100', { limit: 100 }],
    [`loops --root ${big!.r} (${big!.n} loops)`, { root: big!.r }],
    [`loops --root ${lone!.r}`, { root: lone!.r }],
  ];
  const options = { lateMs: config.rollups.lateMs, maxLoops: config.rollups.scanLoops };
  for (const [what, q] of queries) {
    const old: number[] = [];
    const now: number[] = [];
    for (let i = 0; i < runs; i++) {
      const a = await time(() => listLoopsFromAll(ch, q));
      let read = '';
      const b = await time(() => listLoops(ch, q, { ...options, onRead: (r, n) => (read = `${r}${n === undefined ? '' : `, ${n} loops`}`) }));
      if (JSON.stringify(a.out) !== JSON.stringify(b.out)) throw new Error(`${what}: the answers differ`);
      old.push(a.ms);
      now.push(b.ms);
      if (i === 0) process.stdout.write(`${what}: ${b.out.length} loops printed, read: ${read}\n`);
    }
    const med = (xs: number[]): number => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
    process.stdout.write(`  every loop read: median ${(med(old) / 1000).toFixed(2)} s; trees read: median ${(med(now) / 1000).toFixed(3)} s (${runs} runs, answers equal)\n`);
  }
} finally {
  await ch.close();
}
