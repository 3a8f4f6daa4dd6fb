/**
 * everyLoopSql derives a rollup query's whole-table form from its per-loop
 * file by dropping the loop conditions. The rollups integration test runs
 * both forms on the real server and demands the same figures; this checks the
 * text: every loop condition gone, every other condition and read kept.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { everyLoopSql } from '../../../src/rollups/statements.js';
import { querySql } from '../../../src/rollups/queries.js';

const PER_LOOP = ['rollup_insert_runtime', 'rollup_insert_events', 'rollup_insert_ledgers', 'rollup_insert_child_reports'];
const count = (text: string, part: string): number => text.split(part).length - 1;

for (const name of PER_LOOP) {
  test(`${name}: the loop conditions dropped, nothing else`, () => {
    const perLoop = querySql(name);
    const all = everyLoopSql(name);
    assert.ok(count(perLoop, '{loop_ids:Array(String)}') >= 2, 'the per-loop file filters each read by loop');
    assert.equal(count(all, 'loop_ids'), 0);
    // Each read keeps its WHERE (the roots read of rollup_insert_runtime had the loop condition alone and loses it).
    assert.equal(count(all, 'FROM envelopes FINAL'), count(perLoop, 'FROM envelopes FINAL'));
    const aloneInWhere = (perLoop.match(/WHERE loop_id IN \{loop_ids:Array\(String\)\}\s*\)/g) ?? []).length;
    assert.equal(count(all, 'WHERE'), count(perLoop, 'WHERE') - aloneInWhere);
    for (const kept of ['kind_class', 'verdict', 'GROUP BY', 'ANY LEFT JOIN', 'INSERT INTO']) assert.equal(count(all, kept), count(perLoop, kept), kept);
  });
}
