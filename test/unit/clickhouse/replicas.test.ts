/**
 * The ingest's state reads on a cluster (src/clickhouse/replicas.ts):
 * every state query's table becomes remote() over every server, its local
 * table, the login quoted; nothing else in the text changes. Whether 18.16
 * runs them, and what they prevent, is
 * test/integration/cluster-faults.test.ts's.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { everyReplica, ONE_SERVER, STATE_TABLES } from '../../../src/clickhouse/replicas.js';
import { querySql } from '../../../src/store/queries.js';

const SERVERS = [
  { host: '10.0.0.1', port: 9000 },
  { host: '10.0.0.2', port: 9000 },
];
const sql = everyReplica(SERVERS, 'ledger', { user: 'writer', password: "p'w\\d" });
const REMOTE = "remote('10.0.0.1:9000,10.0.0.2:9000', ledger, ";
const LOGIN = ", 'writer', 'p\\'w\\\\d')";

test('each state table read becomes remote() over every server, its local table, the login quoted', () => {
  for (const table of STATE_TABLES) {
    assert.equal(sql(`SELECT x FROM ${table} WHERE a = 1`), `SELECT x FROM ${REMOTE}${table}_local${LOGIN} WHERE a = 1`);
  }
  // Two reads in one query (loop_heads_lost), any case of FROM and spacing.
  assert.equal(sql('SELECT (SELECT 1 from envelopes), (SELECT 2 FROM\n  loop_heads)'), `SELECT (SELECT 1 FROM ${REMOTE}envelopes_local${LOGIN}), (SELECT 2 FROM ${REMOTE}loop_heads_local${LOGIN})`);
});

test('other tables, longer names and the insert target stay as written', () => {
  const text = 'INSERT INTO loop_heads (a) SELECT a FROM envelopes_probe, spend_calls FROM loop_heads_x';
  assert.equal(sql(text), text);
  assert.equal(sql('SELECT 1 FROM envelopes_local'), 'SELECT 1 FROM envelopes_local');
});

test('every shipped state query names its tables only after FROM, so each one is rewritten', () => {
  for (const name of ['envelope_progress', 'envelope_heads', 'envelope_versions', 'loop_heads_lost', 'loop_heads_rederive', 'craze_progress', 'craze_heads', 'craze_seen']) {
    const out = sql(querySql(name));
    assert.notEqual(out, querySql(name), name);
    // What remains of a state table's name is the INSERT target alone.
    const bare = out.replace(/remote\([^)]*\)/g, '').match(new RegExp(`\\b(${STATE_TABLES.join('|')})\\b`, 'g')) ?? [];
    assert.deepEqual(bare, name === 'loop_heads_rederive' ? ['loop_heads'] : [], name);
  }
  assert.equal(ONE_SERVER('SELECT 1 FROM envelopes'), 'SELECT 1 FROM envelopes');
  assert.throws(() => everyReplica([], 'ledger', { user: 'u', password: '' }), /no server/);
});
