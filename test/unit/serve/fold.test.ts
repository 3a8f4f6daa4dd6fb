/** What the page's endpoints fold in Node (src/serve/fold.ts): dense series with exact totals, and loop trees with subtree costs. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { foldSeries, foldTree } from '../../../src/serve/fold.js';
import type { TreeLoopRow } from '../../../src/serve/page-reads.js';

const H = 3600;
const T = Date.parse('2026-12-01T00:00:00Z') / 1000;
const WHALE = 2n ** 64n + 7n;

test('foldSeries: every bucket, zeros where nothing fell, lines costliest first, totals exact past 2^64', () => {
  const got = foldSeries(
    [
      { bucket: T, key: 'b', calls: 2n, costPico: 5n },
      { bucket: T + 2 * H, key: 'a', calls: 1n, costPico: WHALE },
      { bucket: T + 2 * H, key: 'b', calls: 1n, costPico: 1n },
      { bucket: T + 9 * H, key: 'a', calls: 1n, costPico: 1n }, // outside: dropped
    ],
    T,
    T + 3 * H,
    H,
  );
  assert.deepEqual(got.buckets, ['2026-12-01T00:00:00Z', '2026-12-01T01:00:00Z', '2026-12-01T02:00:00Z']);
  assert.deepEqual(
    got.series.map((l) => [l.key, l.costPicoUsd, l.calls, l.totalCostPicoUsd, l.totalCalls]),
    [
      ['a', ['0', '0', WHALE.toString()], [0, 0, 1], WHALE.toString(), 1],
      ['b', ['5', '0', '1'], [2, 0, 1], '6', 3],
    ],
  );
  assert.deepEqual(got.totals, { costPicoUsd: ['5', '0', (WHALE + 1n).toString()], calls: [2, 0, 2] });
  assert.equal(got.totalCostPicoUsd, (WHALE + 6n).toString());
  assert.equal(got.totalCalls, 4);
});

const loop = (loopId: string, ancestors: string[], ownCostPico: bigint, name = ''): TreeLoopRow => ({
  loopId,
  parentLoopId: ancestors.at(-1) ?? '',
  name,
  ancestors,
  ownCalls: ownCostPico === 0n ? 0n : 1n,
  ownCostPico,
});

test('foldTree: parents first, siblings by id, subtree = own + every descendant once, facts per loop', () => {
  const rows = [loop('r/b', ['r'], 3n), loop('r', [], 1n, 'task'), loop('r/a/x', ['r', 'r/a'], WHALE), loop('r/a', ['r'], 2n)];
  const facts = [
    { loopId: 'r', verdict: 'ok', envelopes: 5, outcome: 'Completed', warnings: 0 },
    { loopId: 'r/a', verdict: 'ok', envelopes: 3, outcome: '', warnings: 2 },
    { loopId: 'r/a', verdict: 'mismatch', envelopes: 1, outcome: '', warnings: 0 },
  ];
  const tree = foldTree('r', rows, facts);
  assert.deepEqual(
    tree.map((l) => [l.loopId, l.parentLoopId, l.depth, l.subtreeModelCostPicoUsd]),
    [
      ['r', '', 0, (WHALE + 6n).toString()],
      ['r/a', 'r', 1, (WHALE + 2n).toString()],
      ['r/a/x', 'r/a', 2, WHALE.toString()],
      ['r/b', 'r', 1, '3'],
    ],
  );
  assert.equal(tree[0]!.outcome, 'Completed');
  assert.deepEqual(tree[1]!.verdicts, { ok: 3, mismatch: 1 });
  assert.equal(tree[1]!.convergenceWarnings, 2);
  assert.deepEqual(tree[3]!.verdicts, {});
});

test('foldTree: a loop whose parent is not listed still shows, once, after the rest', () => {
  const tree = foldTree('r', [loop('r', [], 1n), loop('orphan', ['r', 'gone'], 4n)], []);
  assert.deepEqual(tree.map((l) => l.loopId), ['r', 'orphan']);
  assert.equal(tree[0]!.subtreeModelCostPicoUsd, '5');
});
