/**
 * `loops --root` and `loops --limit` read only the trees of the loops they
 * print (src/read/loops.ts listLoops): their answer must be the one of the
 * read of every loop (listLoopsFromAll), for every option, before any sweep
 * (the full read itself), after a sweep, and with loops stored since the
 * last sweep that move whole subtrees into another tree: a parent stored
 * after its children, a parent's SubAgentSpawned stored after the child,
 * from either side, deep chains, forks whose replays name their source's
 * child, a cycle, a root that is only named, a root that does not exist,
 * and a LoopStarted stored again under a new stamp (the case that reads all).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ClickHouseClient } from '@clickhouse/client';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { createRedis } from '../../src/jobs/redis.js';
import { createLogger } from '../../src/observability/logger.js';
import { listLoops, listLoopsFromAll, readLoops, selectLoops, type LoopsQuery } from '../../src/read/loops.js';
import { rebuild, sweep } from '../../src/rollups/rollups.js';
import { createClickHouse } from '../../src/clickhouse/client.js';
import { migrate } from '../../src/migrate/migrate.js';
import { testContext, type TestContext } from '../support/context.js';
import { prng } from '../support/processes.js';
import { foldRow } from '../../src/rows/envelope-facts.js';

const log = createLogger('error');
let ctx: TestContext;
let ch: ClickHouseClient;
const LATE_MS = 1000;
const random = prng(2707);

type Row = Record<string, string | number>;
let offset = 0;
const stamp = (unix: number): string => new Date(unix * 1000).toISOString().slice(0, 19).replace('T', ' ');

/** Rows of one loop: LoopStarted (unless `parent` is null), model calls, spawns, a ForkedFrom. */
function loopRows(
  loopId: string,
  ingestedAt: number,
  opts: { parent?: string | null; depth?: number; spawns?: readonly string[]; calls?: number; fork?: { source: string; atSeq: number }; finished?: boolean; firstSeq?: number },
): Row[] {
  const rows: Row[] = [];
  let seq = opts.firstSeq ?? 1;
  const base = { loop_id: loopId, kafka_topic: 'lr', kafka_partition: 0, ingested_at: stamp(ingestedAt), verdict: 'ok' };
  const add = (r: Row): void => {
    rows.push({ ...base, seq, time: stamp(1764500000 + seq * 7), kafka_offset: offset++, ...r });
    seq++;
  };
  if (opts.parent !== null) add({ kind_class: 'LoopStarted', loop_name: `name-${loopId.slice(0, 6)}`, parent_loop_id: opts.parent ?? '', depth: opts.depth ?? 0 });
  if (opts.fork) add({ kind_class: 'ForkedFrom', fork_source: opts.fork.source, fork_at_seq: opts.fork.atSeq });
  for (const child of opts.spawns ?? []) add({ kind_class: 'SubAgentSpawned', child_loop_id: child, definition: 'd' });
  for (let i = 0; i < (opts.calls ?? 2); i++) {
    add({ kind_class: 'ModelCalled', model_provider: 'p', model_name: 'm', input_tokens: 1 + Math.floor(random() * 900), output_tokens: 3, cost_pico: 1000 + Math.floor(random() * 1e9) });
  }
  if (random() < 0.3) add({ kind_class: 'ModelCalled', verdict: 'mismatch', cost_pico: 77, model_provider: 'p', model_name: 'm' });
  if (opts.finished !== false) add({ kind_class: 'LoopFinished', outcome: random() < 0.8 ? 'Completed' : 'Failed' });
  return rows;
}

async function insert(rows: readonly Row[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 5000) await ch.insert({ table: 'envelopes', values: rows.slice(i, i + 5000).map(foldRow), format: 'JSONEachRow' });
}

async function sweepNow(): Promise<void> {
  const redis = createRedis(ctx.config.redis.url);
  try {
    const r = await sweep({ ch, redis, prefix: ctx.config.redis.queuePrefix, scanLoops: ctx.config.rollups.scanLoops, log }, LATE_MS);
    assert.equal(r.skipped, undefined, 'the sweep ran');
  } finally {
    redis.disconnect();
  }
}

type Read = 'trees' | 'summaries' | 'all';

/** Every option combination over these roots: the tree read equals the full read. Returns which read answered, per query. */
async function compareAll(what: string, roots: readonly string[]): Promise<Map<string, Read>> {
  const reads = new Map<string, Read>();
  candidates.clear();
  sources.clear();
  const queries: LoopsQuery[] = [];
  for (const limit of [undefined, 0, 1, 2, 7, 40, 1000]) {
    for (const idPrefix of [undefined, 'lr-a', 'lr-', 'zz']) {
      queries.push({ limit, idPrefix });
      for (const root of roots) queries.push({ limit, idPrefix, root });
    }
  }
  // The full read once (listLoopsFromAll is selectLoops of it), checked once against the function itself.
  const every = await readLoops(ch);
  assert.equal(JSON.stringify(await listLoopsFromAll(ch, { root: roots[0] })), JSON.stringify(selectLoops(every, { root: roots[0] })));
  for (const q of queries) {
    const key = JSON.stringify(q);
    const want = JSON.stringify(selectLoops(every, q));
    let read: Read | undefined;
    const got = JSON.stringify(
      await listLoops(ch, q, {
        lateMs: LATE_MS,
        maxLoops: 4000,
        onRead: (r, n, from) => {
          read = r;
          if (n !== undefined) candidates.set(key, n);
          if (from !== undefined) sources.set(key, from);
        },
      }),
    );
    assert.equal(got, want, `${what}: ${key}`);
    if (read) reads.set(key, read);
  }
  return reads;
}

/** Per query of the last compareAll(), the loops the tree read took. */
const candidates = new Map<string, number>();
/** Per query of the last compareAll(), how many loops' rows came from loop_summaries and how many were read live. */
const sources = new Map<string, { readonly summarized: number; readonly live: number }>();
const now = Math.floor(Date.now() / 1000);
const OLD = now - 7200;

before(async () => {
  ctx = await testContext('loops_read');
  await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, log);
  ch = createClickHouse(ctx.config.clickhouse);
});

after(async () => {
  await ch?.close();
  await ctx?.cleanup();
});

test('loops --root and --limit read only the trees they print, and print what the full read prints', async () => {
  const rows: Row[] = [];
  // Tree A: a root, children from either side, a deep chain (LoopStarted depth given on some only).
  rows.push(...loopRows('lr-a-root', OLD, { spawns: ['lr-a-c1', 'lr-a-c2'] }));
  rows.push(...loopRows('lr-a-c1', OLD, { parent: 'lr-a-root', depth: 1 }));
  rows.push(...loopRows('lr-a-c2', OLD, { parent: null })); // only the parent's SubAgentSpawned names its parent
  rows.push(...loopRows('lr-a-c3', OLD, { parent: 'lr-a-c1', depth: 2 })); // the parent side never says
  let up = 'lr-a-c3';
  for (let i = 0; i < 30; i++) {
    const id = `lr-a-deep-${String(i).padStart(2, '0')}`;
    rows.push(...loopRows(id, OLD, { parent: up, ...(i % 2 === 0 ? { depth: 3 + i } : {}), calls: 1 }));
    up = id;
  }
  // Tree B: a fork of a B loop whose replayed SubAgentSpawned names the source's child.
  rows.push(...loopRows('lr-b-root', OLD, { spawns: ['lr-b-kid'] }));
  rows.push(...loopRows('lr-b-kid', OLD, { parent: 'lr-b-root', depth: 1 }));
  rows.push(...loopRows('lr-b-fork', OLD, { parent: 'lr-b-root', depth: 1, spawns: ['lr-b-kid'], fork: { source: 'lr-b-root', atSeq: 3 } }));
  // Tree C: children stored, their parent not yet (it joins tree A after the sweep).
  rows.push(...loopRows('lr-c-kid1', OLD, { parent: 'lr-c-mid', depth: 2 }));
  rows.push(...loopRows('lr-c-kid2', OLD, { parent: 'lr-c-mid', depth: 2 }));
  rows.push(...loopRows('lr-c-grand', OLD, { parent: 'lr-c-kid1', depth: 3 }));
  // Tree D: a root of its own now; a B loop's SubAgentSpawned stored after the sweep makes it B's child.
  rows.push(...loopRows('lr-d-top', OLD, {}));
  rows.push(...loopRows('lr-d-under', OLD, { parent: 'lr-d-top', depth: 1 }));
  // A cycle, a root that is only named (never stored), loops with no LoopStarted.
  rows.push(...loopRows('lr-e-x', OLD, { parent: 'lr-e-y' }));
  rows.push(...loopRows('lr-e-y', OLD, { parent: 'lr-e-x' }));
  rows.push(...loopRows('lr-e-z', OLD, { parent: 'lr-e-x' }));
  rows.push(...loopRows('lr-f-kid', OLD, { parent: 'lr-f-ghost', depth: 1 }));
  rows.push(...loopRows('lr-g-lone', OLD, { parent: null, finished: false }));
  // A loop whose LoopStarted names one parent while another's SubAgentSpawned names it.
  rows.push(...loopRows('lr-i-spawner', OLD, { spawns: ['lr-i-kid'] }));
  rows.push(...loopRows('lr-i-kid', OLD, { parent: 'lr-t09', depth: 1 }));
  // Many small trees around them, so a limit or a root reads a part.
  for (let t = 0; t < 40; t++) {
    const root = `lr-t${String(t).padStart(2, '0')}`;
    const kids = [`${root}-k1`, `${root}-k2`];
    rows.push(...loopRows(root, OLD, { spawns: t % 2 === 0 ? kids : [] }));
    for (const k of kids) rows.push(...loopRows(k, OLD, t % 3 === 0 ? { parent: null } : { parent: root, depth: 1 }));
  }
  // The newest stamp before the sweep, ten minutes after the rest: the rest
  // are then older than the sweep's newest stamp less the margin.
  rows.push(...loopRows('lr-mark', OLD + 600, {}));
  await insert(rows);
  const roots = ['lr-a-root', 'lr-a-c1', 'lr-b-root', 'lr-c-mid', 'lr-c-kid1', 'lr-d-top', 'lr-e-x', 'lr-e-y', 'lr-f-ghost', 'lr-g-lone', 'lr-t05', 'no-such-loop'];

  // No sweep yet: every query reads all (and says so).
  const before = await compareAll('before any sweep', roots);
  assert.ok([...before.values()].every((r) => r === 'all'), 'without a finished sweep, loops reads every loop');

  await sweepNow();
  const swept = await compareAll('after the sweep', roots);
  assert.equal(swept.get(JSON.stringify({ root: 'lr-a-root' })), 'trees', '--root reads the tree');
  assert.ok([...swept.values()].filter((r) => r === 'trees').length > 50, 'the tree read answers --root and --limit');
  assert.ok(candidates.get(JSON.stringify({ root: 'lr-t05' }))! <= 5, `--root reads its tree only: ${candidates.get(JSON.stringify({ root: 'lr-t05' }))} loops`);
  assert.ok(candidates.get(JSON.stringify({ limit: 1 }))! <= 40, "--limit 1 reads the first loop's tree only (tree A: 35 loops)");
  // The sweep's summary step wrote every loop's row: only lr-mark, stored at
  // the mark itself, is read live (without the step every row would be).
  assert.deepEqual(sources.get(JSON.stringify({ root: 'lr-a-root' })), { summarized: 34, live: 1 }, "--root takes its tree's rows from the sweep's summaries");
  assert.equal(swept.get(JSON.stringify({})), 'summaries', 'loops without --root or --limit reads the summaries');
  assert.equal(sources.get(JSON.stringify({}))?.live, 1);
  assert.equal(sources.get(JSON.stringify({}))?.summarized, (await readLoops(ch)).length - 1, 'every loop has its summary');

  // Stored since the sweep: C's parent (naming A's c2 as its parent) arrives,
  // B's root spawns D's top (parent side), a new child under a t-tree.
  await insert([
    ...loopRows('lr-c-mid', now, { parent: 'lr-a-c2', depth: 2 }),
    ...loopRows('lr-b-root', now, { parent: null, spawns: ['lr-d-top'], firstSeq: 50, finished: false }),
    ...loopRows('lr-t07-k3', now, { parent: 'lr-t07', depth: 1 }),
  ]);
  const live = await compareAll('with loops stored since the sweep', [...roots, 'lr-t07']);
  assert.equal(live.get(JSON.stringify({ root: 'lr-a-root' })), 'trees', '--root still reads the tree with loops stored since the sweep');
  // lr-c-mid, lr-t07-k3 are stored since, lr-b-root has rows stored since (and lr-mark).
  assert.equal(sources.get(JSON.stringify({}))?.live, 4, 'the loops stored since the sweep are read live, the rest from the summaries');
  const a = await listLoops(ch, { root: 'lr-a-root' }, { lateMs: LATE_MS, maxLoops: 4000 });
  assert.ok(a.some((r) => r.loop.loopId === 'lr-c-grand'), 'a subtree stored before its parent joined the tree');
  const b = await listLoops(ch, { root: 'lr-b-root' }, { lateMs: LATE_MS, maxLoops: 4000 });
  assert.ok(b.some((r) => r.loop.loopId === 'lr-d-under'), 'a subtree a SubAgentSpawned stored since moved joined the tree');

  // A LoopStarted stored again under a new stamp (a redelivery, merged or
  // not with the first), and a loop whose LoopStarted naming a parent is
  // replaced by one naming none: its parent is now the loop whose old
  // SubAgentSpawned named it, which no row stored since names. The tree it
  // left reads every loop (the tree it joined may not be among the
  // candidates); the tree it joined finds it by its spawner's rows.
  await insert([
    { ...rows.find((r) => r['loop_id'] === 'lr-t04-k1' && r['kind_class'] === 'LoopStarted')!, ingested_at: stamp(now) },
    ...loopRows('lr-i-kid', now, { parent: '', firstSeq: 60, calls: 1 }),
  ]);
  const redelivered = await compareAll('with a LoopStarted stored again, and a parent lost', ['lr-t04', 'lr-i-spawner', 'lr-t09', 'lr-a-root']);
  assert.equal(redelivered.get(JSON.stringify({ root: 'lr-t09' })), 'summaries', 'a loop that lost its LoopStarted parent since the sweep: every loop is read (from the summaries)');
  assert.equal(redelivered.get(JSON.stringify({ root: 'lr-i-spawner' })), 'trees', "its new parent's tree is read by the tree read");
  const i = await listLoops(ch, { root: 'lr-i-spawner' }, { lateMs: LATE_MS, maxLoops: 4000 });
  assert.deepEqual(i.map((r) => r.loop.loopId), ['lr-i-spawner', 'lr-i-kid']);

  // The next sweep, once newer rows are stored: the redelivered LoopStarted
  // is then older than the last sweep's newest stamp less the margin.
  await insert(loopRows('lr-h-later', now + 120, {}));
  await sweepNow();
  const resewpt = await compareAll('after the next sweep', [...roots, 'lr-t07', 'lr-t04', 'lr-i-spawner']);
  assert.equal(resewpt.get(JSON.stringify({ root: 'lr-i-spawner' })), 'trees');
  assert.equal(resewpt.get(JSON.stringify({ root: 'lr-a-root' })), 'trees');

  // Stored after that sweep, each changing a swept loop's own row: a new
  // call in a finished loop, a late child, a loop re-parented by a newer
  // LoopStarted, a ForkedFrom that makes a loop's first calls replays, and
  // a loop all of whose rows are replaced by second versions.
  const later = now + 240;
  const forkedRows = rows.filter((r) => r['loop_id'] === 'lr-t16-k1');
  await insert([
    ...loopRows('lr-t11', later, { parent: null, calls: 3, firstSeq: 70, finished: false }),
    ...loopRows('lr-t12-k9', later, { parent: 'lr-t12', depth: 1 }),
    ...loopRows('lr-t13', later, { parent: 'lr-t14', depth: 1, firstSeq: 80, calls: 0, finished: false }),
    ...loopRows('lr-t15-k1', later, { parent: null, fork: { source: 'lr-t15', atSeq: 3 }, firstSeq: 90, calls: 1, finished: false }),
    ...forkedRows.map((r) => ({ ...r, verdict: 'fork', ingested_at: stamp(later) })),
  ]);
  const moved = await compareAll('with rows stored after the second sweep', ['lr-t11', 'lr-t12', 'lr-t13', 'lr-t14', 'lr-t15', 'lr-t16']);
  assert.equal(moved.get(JSON.stringify({ root: 'lr-t14' })), 'trees');
  assert.ok((sources.get(JSON.stringify({ root: 'lr-t14' }))?.live ?? 0) >= 1, 'the re-parented loop is read live');
  const t14 = await listLoops(ch, { root: 'lr-t14' }, { lateMs: LATE_MS, maxLoops: 4000 });
  assert.ok(t14.some((r) => r.loop.loopId === 'lr-t13-k2'), "a re-parented loop's subtree moved with it");
  const everyNow = await readLoops(ch);
  assert.equal(everyNow.find((l) => l.loopId === 'lr-t16-k1'), undefined, 'a loop whose rows are all second versions has no row');

  // The next sweep summarizes them; then a stale recompute (a lower version
  // than any sweep's: 0, the first sweep took 1) writes wrong summaries late:
  // they lose to the sweep's, merged or not. (Versions never tie: each is
  // claimed once. With a tie a merge keeps the row inserted last, which a
  // CI run once caught when this test wrote version 1.)
  await insert(loopRows('lr-h-latest', later + 120, {}));
  await sweepNow();
  const resummarized = await compareAll('after the third sweep', ['lr-t11', 'lr-t13', 'lr-t14', 'lr-t15', 'lr-t16']);
  assert.deepEqual(sources.get(JSON.stringify({ root: 'lr-t14' })), { summarized: 6, live: 1 }, 'its tree from the summaries (lr-h-latest, at the mark, live)');
  assert.equal(resummarized.get(JSON.stringify({})), 'summaries');
  assert.equal(sources.get(JSON.stringify({}))?.live, 1, 'the third sweep summarized every loop stored since the second');
  await ch.insert({
    table: 'loop_summaries',
    values: ['lr-t11', 'lr-t14', 'lr-t16-k1', 'lr-a-root'].map((loop_id) => ({ loop_id, version: '0', present: 1, name: 'stale', model_cost: '999', input_tokens_sum: '1', output_tokens_sum: '1', budget_cost: '0', unverified_model_cost: '0', first_time_text: 'x', last_time_text: 'x', children: ['lr-t01'] })),
    format: 'JSONEachRow',
  });
  // Merged into the sweep's parts, as a background merge may do at any time.
  await ch.command({ query: 'OPTIMIZE TABLE loop_summaries FINAL' });
  const stale = await compareAll('with a stale recompute written after the sweep', ['lr-t11', 'lr-t14', 'lr-t16', 'lr-a-root', 'lr-t01']);
  assert.equal(stale.get(JSON.stringify({ root: 'lr-t14' })), 'trees');
  assert.equal(sources.get(JSON.stringify({ root: 'lr-t14' }))?.live, 1);

  // Rows stored later than their stamp by more than the margin (a model call
  // of lr-t11 stamped two hours back): no sweep sees them, the summaries keep
  // the old row; `rollups rebuild` recomputes every loop's summary.
  await sweepNow();
  await insert(loopRows('lr-t11', OLD, { parent: null, calls: 3, finished: false, firstSeq: 500 }));
  const q = { root: 'lr-t11' };
  const summarizedRow = (await listLoops(ch, q, { lateMs: LATE_MS, maxLoops: 4000 })).find((l) => l.loop.loopId === 'lr-t11');
  const fullRow = selectLoops(await readLoops(ch), q).find((l) => l.loop.loopId === 'lr-t11');
  assert.notEqual(JSON.stringify(summarizedRow), JSON.stringify(fullRow), 'a row stored too late is missed until a rebuild (the case this step tests)');
  const redis = createRedis(ctx.config.redis.url);
  try {
    await rebuild({ ch, redis, prefix: ctx.config.redis.queuePrefix, scanLoops: ctx.config.rollups.scanLoops, log }, { from: 0, until: now + 86_400, everything: true, lateMs: LATE_MS });
  } finally {
    redis.disconnect();
  }
  const rebuilt = await compareAll('after rollups rebuild', ['lr-t11', 'lr-t14', 'lr-a-root']);
  assert.equal(rebuilt.get(JSON.stringify(q)), 'trees');
  assert.ok((sources.get(JSON.stringify(q))?.summarized ?? 0) > 0, "after the rebuild lr-t11's tree is read from the summaries");
});
