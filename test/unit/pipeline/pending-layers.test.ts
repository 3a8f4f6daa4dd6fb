import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PendingLayers } from '../../../src/pipeline/pending-layers.js';

const layersOf = (p: PendingLayers<string[]>): string[][] => p.all.map((l) => [...l]);

test('a layer leaves only at the settle after its buffer, and every one before it, is durable, oldest first', () => {
  const p = new PendingLayers<string[]>(() => []);
  p.current.push('a');
  const first = p.seal();
  p.current.push('b');
  const second = p.seal();
  p.current.push('c');
  assert.deepEqual([first, second], [0, 1]);

  p.durable(first);
  assert.deepEqual(layersOf(p), [['a'], ['b'], ['c']], 'durable() alone drops nothing: a batch may be judging');
  const folded: string[][] = [];
  p.settle((l) => folded.push(l));
  assert.deepEqual(folded, [['a']]);
  assert.deepEqual(layersOf(p), [['b'], ['c']]);

  p.durable();
  p.settle((l) => folded.push(l));
  assert.deepEqual(folded, [['a'], ['b'], ['c']], 'all judged rows durable: every layer folded, in order');
  assert.deepEqual(layersOf(p), [[]], 'a fresh layer takes what is judged next');
  p.current.push('d');
  assert.equal(p.seal(), 3, 'numbers go on after the layers were folded');
});

test('after a reset, a flush of the old generation that lands late marks nothing of the new one durable', () => {
  const p = new PendingLayers<string[]>(() => []);
  p.current.push('old');
  const old = p.seal();
  p.reset();
  assert.deepEqual(layersOf(p), [[]]);
  p.current.push('new');
  p.durable(old);
  p.settle(() => assert.fail('nothing of the new generation may be folded'));
  assert.deepEqual(layersOf(p), [['new']]);
});

test('holds(n): a buffer is held from its first judged row until the settle after it is durable', () => {
  const p = new PendingLayers<string[]>(() => []);
  const first = p.number;
  p.current.push('a');
  assert.equal(p.seal(), first, 'number is what seal() returns');
  const second = p.number;
  assert.ok(p.holds(first) && p.holds(second));
  p.durable(first);
  assert.ok(p.holds(first), 'durable, not yet settled: a batch may be judging against it');
  p.settle();
  assert.ok(!p.holds(first) && p.holds(second));
  p.durable();
  p.settle();
  assert.ok(!p.holds(second));
  assert.ok(p.holds(p.number), 'the layer taking rows now is held');
  p.reset();
  assert.ok(!p.holds(-1) && p.holds(p.number));
});
