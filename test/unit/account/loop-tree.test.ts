/** The loop tree: parents from either side, roots through ancestors stored later, subtree sums with each loop once. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { foldLoopTree, type LoopFacts } from '../../../src/account/loop-tree.js';
import { foldSpend } from '../../../src/read/spend.js';
import type { SpendGroup } from '../../../src/read/spend-reads.js';

const loop = (loopId: string, cost: bigint, startedParent = '', startedDepth?: bigint): LoopFacts => ({ loopId, startedParent, startedDepth, modelCostPico: cost });

test('a parent named by either side; roots and depths through the whole chain', () => {
  // root -> a (LoopStarted names root) -> b (only root's... a's SubAgentSpawned names b) -> c (both)
  const loops = [loop('c', 1n, 'b', 3n), loop('b', 10n), loop('a', 100n, 'root', 1n), loop('root', 1000n, '', 0n)];
  const places = foldLoopTree(loops, new Map([['b', 'a'], ['c', 'b']]));
  assert.deepEqual(places.get('root'), { parentLoopId: '', rootLoopId: 'root', depth: 0n, subtreeModelCostPico: 1111n });
  assert.deepEqual(places.get('a'), { parentLoopId: 'root', rootLoopId: 'root', depth: 1n, subtreeModelCostPico: 111n });
  // No LoopStarted stored for b: its depth is the steps to its root.
  assert.deepEqual(places.get('b'), { parentLoopId: 'a', rootLoopId: 'root', depth: 2n, subtreeModelCostPico: 11n });
  assert.deepEqual(places.get('c'), { parentLoopId: 'b', rootLoopId: 'root', depth: 3n, subtreeModelCostPico: 1n });
});

test('a grandchild stored before its parent: its root is the highest ancestor known, and the true root once the chain is stored', () => {
  const early = foldLoopTree([loop('g', 5n, 'p', 2n)], new Map());
  assert.equal(early.get('g')?.rootLoopId, 'p');
  const later = foldLoopTree([loop('g', 5n, 'p', 2n), loop('p', 7n, 'r', 1n), loop('r', 0n, '', 0n)], new Map());
  assert.equal(later.get('g')?.rootLoopId, 'r');
  assert.equal(later.get('r')?.subtreeModelCostPico, 12n);
});

test('the child LoopStarted wins over a SubAgentSpawned that names another parent', () => {
  const places = foldLoopTree([loop('x', 1n, 'p1', 1n), loop('p1', 0n), loop('p2', 0n)], new Map([['x', 'p2']]));
  assert.equal(places.get('x')?.parentLoopId, 'p1');
  assert.equal(places.get('p1')?.subtreeModelCostPico, 1n);
  assert.equal(places.get('p2')?.subtreeModelCostPico, 0n);
});

test('a cycle (hostile input) ends the walk: every loop has a root and no cost is counted twice', () => {
  const places = foldLoopTree([loop('a', 1n, 'b'), loop('b', 2n, 'a')], new Map());
  for (const id of ['a', 'b']) assert.ok(['a', 'b'].includes(places.get(id)!.rootLoopId));
  // Each subtree holds each loop at most once; the walk that met the cycle first holds both.
  const sums = ['a', 'b'].map((id) => places.get(id)!.subtreeModelCostPico).sort();
  assert.deepEqual(sums, [2n, 3n]);
});

test('a chain of 100,000 loops folds without overflowing the stack', () => {
  const loops: LoopFacts[] = [];
  for (let i = 0; i < 100_000; i++) loops.push(loop(`l${i}`, 1n, i === 0 ? '' : `l${i - 1}`));
  const places = foldLoopTree(loops, new Map());
  assert.equal(places.get('l0')?.subtreeModelCostPico, 100_000n);
  assert.equal(places.get('l99999')?.rootLoopId, 'l0');
  assert.equal(places.get('l99999')?.depth, 99_999n);
});

test('spend folds by model, day, name, root and source, exactly past 2^64 picodollars', () => {
  const big = 9_000_000_000_000_000_000n; // $9M, under Int64 max per call
  const g = (over: Partial<SpendGroup>): SpendGroup => ({
    source: 'runtime',
    owner: 'a',
    provider: 'p',
    model: 'm',
    day: '2026-11-30',
    calls: 1,
    inputTokens: 1n,
    outputTokens: 2n,
    costPico: big,
    unpricedCalls: 0,
    ...over,
  });
  const groups = [g({}), g({ owner: 'b', day: '2026-12-01' }), g({ owner: 'c' }), g({ source: 'craze', owner: 's1', costPico: 5n, unpricedCalls: 1 })];
  const owners = new Map([
    ['a', { name: 'planner', root: 'a' }],
    ['b', { name: 'coder', root: 'a' }],
    ['c', { name: 'coder', root: 'c' }],
  ]);
  const byModel = foldSpend(groups, 'model', owners);
  assert.deepEqual(byModel[0], { source: 'runtime', provider: 'p', model: 'm', calls: 3, inputTokens: '3', outputTokens: '6', costPicoUsd: (3n * big).toString(), unpricedCalls: 0 });
  assert.ok(3n * big > 2n ** 64n);
  assert.deepEqual(byModel[1], { source: 'craze', provider: 'p', model: 'm', calls: 1, inputTokens: '1', outputTokens: '2', costPicoUsd: '5', unpricedCalls: 1 });
  assert.deepEqual(
    foldSpend(groups, 'root', owners).map((r) => [r.source, r.rootLoopId, r.costPicoUsd]),
    [
      ['runtime', 'a', (2n * big).toString()],
      ['runtime', 'c', big.toString()],
      ['craze', 's1', '5'],
    ],
  );
  assert.deepEqual(
    foldSpend(groups, 'name', owners).map((r) => [r.name, r.calls]),
    [
      ['coder', 2],
      ['planner', 1],
      ['', 1],
    ],
  );
  assert.deepEqual(
    foldSpend(groups, 'day', owners).map((r) => [r.source, r.day, r.calls]),
    // Newest day first, whatever it cost; within a day costliest first.
    [
      ['runtime', '2026-12-01', 1],
      ['runtime', '2026-11-30', 2],
      ['craze', '2026-11-30', 1],
    ],
  );
  assert.deepEqual(
    foldSpend(groups, 'source', owners).map((r) => [r.source, r.costPicoUsd]),
    [
      ['runtime', (3n * big).toString()],
      ['craze', '5'],
    ],
  );
});
