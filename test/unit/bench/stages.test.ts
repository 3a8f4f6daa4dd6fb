/**
 * The per-stage CPU budget of bench/e2e.sh (bench/stages.ts): a frame's
 * stage, a synthetic .cpuprofile split into stages and scaled to measured
 * CPU, ClickHouse's queries by kind (on the store's own query files), and
 * the /proc readings.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  frameRole,
  parsePidStat,
  parseProcStat,
  parseTaskStat,
  processBudget,
  queryKind,
  serverBudget,
  splitProfile,
  STAGES,
  threadKind,
  threadOfProfile,
  type CpuProfile,
} from '../../../bench/stages.js';

const ROOT = 'file:///work/app/dist';
const NM = 'file:///work/app/node_modules';

test('frameRole: the project by folder, packages by name, natives and node internals as helpers', () => {
  const role = (url: string, functionName = 'f') => frameRole({ url, functionName });
  assert.deepEqual(role(`${NM}/kafkajs/src/protocol/recordBatch/v0/index.js`), { role: 'owner', stage: 'kafka' });
  // A package's own src/decode/ is not the project's decode stage.
  assert.deepEqual(role(`${NM}/some-lib/src/decode/x.js`), { role: 'helper' });
  assert.deepEqual(role(`${NM}/@clickhouse/client/dist/client.js`), { role: 'owner', stage: 'insert' });
  assert.deepEqual(role(`${ROOT}/src/decode/envelope.js`), { role: 'owner', stage: 'decode' });
  assert.deepEqual(role(`${ROOT}/src/verify/hash.js`), { role: 'owner', stage: 'verify' });
  assert.deepEqual(role(`${ROOT}/src/account/loop-facts.js`), { role: 'owner', stage: 'account' });
  assert.deepEqual(role(`${ROOT}/src/rows/envelope-facts.js`), { role: 'owner', stage: 'account' });
  assert.deepEqual(role(`${ROOT}/src/store/tsv.js`), { role: 'owner', stage: 'encode' });
  assert.deepEqual(role(`${ROOT}/src/store/rowbinary.js`), { role: 'owner', stage: 'encode' });
  assert.deepEqual(role(`${ROOT}/src/rows/encoded.js`), { role: 'owner', stage: 'encode' });
  assert.deepEqual(role(`${ROOT}/src/rows/rows.js`), { role: 'helper' });
  assert.deepEqual(role(`${ROOT}/src/store/envelope-store.js`), { role: 'owner', stage: 'insert' });
  assert.deepEqual(role(`${ROOT}/src/pipeline/envelopes.js`), { role: 'owner', stage: 'core' });
  assert.deepEqual(role(`${ROOT}/src/ingest/writer.js`), { role: 'owner', stage: 'core' });
  assert.deepEqual(role(`${ROOT}/src/money/picodollars.js`), { role: 'helper' });
  assert.deepEqual(role(''), { role: 'helper' });
  assert.deepEqual(role('node:internal/crypto/hash'), { role: 'helper', fallback: 'verify' });
  assert.deepEqual(role('node:_http_client'), { role: 'helper', fallback: 'insert' });
  assert.deepEqual(role('node:internal/stream_base_commons'), { role: 'helper', fallback: 'net' });
  assert.deepEqual(role('', '(garbage collector)'), { role: 'owner', stage: 'gc' });
  assert.deepEqual(role('', '(idle)'), { role: 'idle' });
  assert.deepEqual(role('', '(program)'), { role: 'owner', stage: 'rest' });
});

/** A profile from a tree of [id, functionName, url, children] and the µs each node was sampled for (10 µs a sample). */
function profile(nodes: readonly (readonly [number, string, string, readonly number[]])[], self: Record<number, number>): CpuProfile {
  const samples = Object.entries(self).flatMap(([id, us]) => Array<number>(us / 10).fill(Number(id)));
  return {
    nodes: nodes.map(([id, functionName, url, children]) => ({ id, callFrame: { functionName, url }, children })),
    startTime: 1_000,
    // Each sample lasts until the next; the last one until endTime.
    endTime: 1_000 + (samples.length + 1) * 10,
    samples,
    timeDeltas: samples.map(() => 10),
  };
}

// root
//  ├ (program) 2, (idle) 3, (garbage collector) 4
//  ├ kafkajs fetch 5 ─ JSON.parse 6                      -> kafka
//  │   └ pipeline batch 7 ─ decode 8 ─ zod 9             -> decode
//  │                     ├ verify 10 ─ crypto 11 ─ digest 12  -> verify
//  │                     ├ account 20 ─ envelope-facts 21 -> account
//  │                     └ writer 19 ─ tsv 18 ─ Buffer 22 -> encode
//  ├ onStreamRead 13 ─ push 23 ─ kafkajs onData 14      -> kafka (the socket leads to kafkajs)
//  ├ onStreamRead 15 ─ http parser 16 ─ @clickhouse 17  -> insert
//  ├ onStreamRead 24 (nothing below)                    -> insert (the default)
//  └ pino 25                                            -> rest (no owner above)
const TREE = [
  [1, '(root)', '', [2, 3, 4, 5, 13, 15, 24, 25]],
  [2, '(program)', '', []],
  [3, '(idle)', '', []],
  [4, '(garbage collector)', '', []],
  [5, 'fetch', `${NM}/kafkajs/src/consumer/runner.js`, [6, 7]],
  [6, 'parse', '', []],
  [7, 'processEnvelopeBatch', `${ROOT}/src/pipeline/envelopes.js`, [8, 10, 20, 19]],
  [8, 'decodeEnvelope', `${ROOT}/src/decode/envelope.js`, [9]],
  [9, 'safeParse', `${NM}/zod/v4/core/parse.js`, []],
  [10, 'verifyLink', `${ROOT}/src/verify/chain.js`, [11]],
  [11, 'update', 'node:internal/crypto/hash', [12]],
  [12, 'digest', '', []],
  [13, 'onStreamRead', 'node:internal/stream_base_commons', [23]],
  [14, 'onData', `${NM}/kafkajs/src/network/connection.js`, []],
  [15, 'onStreamRead', 'node:internal/stream_base_commons', [16]],
  [16, 'parserOnIncomingClient', 'node:_http_client', [17]],
  [17, 'onResponse', `${NM}/@clickhouse/client/dist/connection.js`, []],
  [18, 'tsvChunks', `${ROOT}/src/store/tsv.js`, [22]],
  [19, 'flush', `${ROOT}/src/ingest/writer.js`, [18]],
  [20, 'loopFacts', `${ROOT}/src/account/loop-facts.js`, [21]],
  [21, 'foldFacts', `${ROOT}/src/rows/envelope-facts.js`, []],
  [22, 'write', 'node:buffer', []],
  [23, 'push', 'node:internal/streams/readable', [14]],
  [24, 'onStreamRead', 'node:internal/stream_base_commons', []],
  [25, 'info', `${NM}/pino/lib/proto.js`, []],
] as const;

const SELF = { 2: 10, 3: 1000, 4: 40, 5: 20, 6: 30, 7: 50, 8: 60, 9: 70, 10: 10, 11: 20, 12: 80, 13: 30, 23: 10, 14: 20, 15: 10, 16: 20, 17: 30, 18: 40, 19: 10, 20: 20, 21: 30, 22: 50, 24: 10, 25: 10 };

test('splitProfile: self time to the nearest owner above, helpers to their caller, sockets by what they lead to, idle apart', () => {
  const split = splitProfile(profile(TREE, SELF));
  assert.deepEqual(split.stages, {
    kafka: 20 + 30 + (30 + 10 + 20),
    decode: 60 + 70,
    verify: 10 + 20 + 80,
    account: 20 + 30,
    encode: 40 + 50,
    insert: 10 + 20 + 30 + 10,
    gc: 40,
    core: 50 + 10,
    rest: 10 + 10,
  });
  assert.equal(split.idleMicros, 1000);
  assert.equal(split.busyMicros, Object.values(SELF).reduce((a, b) => a + b, 0) - 1000);
});

test('splitProfile: without a sample list, the hit counts share the profile\'s length', () => {
  const p: CpuProfile = {
    nodes: [
      { id: 1, callFrame: { functionName: '(root)', url: '' }, hitCount: 0, children: [2, 3] },
      { id: 2, callFrame: { functionName: 'd', url: `${ROOT}/src/decode/envelope.js` }, hitCount: 3 },
      { id: 3, callFrame: { functionName: '(idle)', url: '' }, hitCount: 1 },
    ],
    startTime: 0,
    endTime: 400,
  };
  const split = splitProfile(p);
  assert.equal(split.stages.decode, 300);
  assert.equal(split.idleMicros, 100);
});

test('processBudget: shares of the sampled time scaled to the measured CPU, per envelope, summing to the total; per thread too', () => {
  const main = splitProfile(profile(TREE, SELF));
  const worker = splitProfile(profile(TREE, { 8: 200, 3: 500 }));
  const sampled = main.busyMicros + worker.busyMicros;
  const cpuSeconds = (sampled * 2) / 1e6; // the profiler saw half of what the process used
  const b = processBudget(
    [
      { file: 'CPU.20261207.141503.4242.0.001.cpuprofile', split: main },
      { file: 'CPU.20261207.141503.4242.1.002.cpuprofile', split: worker },
    ],
    cpuSeconds,
    10,
  );
  assert.equal(b.totalUsPerEnvelope, (cpuSeconds * 1e6) / 10);
  const sum = STAGES.reduce((s, k) => s + b.stages[k], 0);
  assert.ok(Math.abs(sum - b.totalUsPerEnvelope) < 1e-9, `${sum} != ${b.totalUsPerEnvelope}`);
  assert.equal(b.stages.decode, ((130 + 200) * 2) / 10);
  assert.equal(b.sampledShare, 0.5);
  assert.deepEqual(
    b.threads.map((t) => [t.thread, t.usPerEnvelope]),
    [
      [0, (main.busyMicros * 2) / 10],
      [1, (200 * 2) / 10],
    ],
  );
});

test('processBudget with the threads\' CPU: each group of profiles scaled to its threads\' CPU, helper threads as rows, the whole fitted to the process', () => {
  const main = splitProfile(profile(TREE, SELF));
  const worker = splitProfile(profile(TREE, { 8: 200, 3: 500 }));
  // Tasks read at 9 s of the process's 10: fitted by 10/9.
  const b = processBudget(
    [
      { file: 'CPU.20261207.141503.4242.0.001.cpuprofile', split: main },
      { file: 'CPU.20261207.141503.4242.1.002.cpuprofile', split: worker },
    ],
    10,
    1e6,
    { main: 4.5, worker: 2.7, v8: 0.9, other: 0.9 },
  );
  const fit = 10 / 9;
  assert.ok(Math.abs(b.threads[0]!.usPerEnvelope - 4.5 * fit) < 1e-9);
  assert.ok(Math.abs(b.threads[1]!.usPerEnvelope - 2.7 * fit) < 1e-9);
  assert.ok(Math.abs(b.stages.decode - ((130 / main.busyMicros) * 4.5 + 2.7) * fit) < 1e-9);
  assert.ok(Math.abs(b.helpers!.v8 - 0.9 * fit) < 1e-9);
  const sum = STAGES.reduce((s, k) => s + b.stages[k], 0) + b.helpers!.v8 + b.helpers!.other;
  assert.ok(Math.abs(sum - 10) < 1e-9, `${sum}`);
  // A worker thread without a profile (started with execArgv: []) is node's, not a stage's.
  const alone = processBudget([{ file: 'CPU.20261207.141503.4242.0.001.cpuprofile', split: main }], 2, 1e6, { main: 1, worker: 0.5, v8: 0.25, other: 0.25 });
  assert.equal(alone.helpers!.other, 0.75);
  assert.equal(alone.threads[0]!.usPerEnvelope, 1);
});

test('threadKind: the main thread by its id, V8\'s and node\'s own by name, the rest JavaScript workers', () => {
  assert.equal(threadKind(4242, 4242, 'MainThread'), 'main');
  assert.equal(threadKind(4243, 4242, 'V8Worker'), 'v8');
  assert.equal(threadKind(4244, 4242, 'libuv-worker'), 'other');
  assert.equal(threadKind(4245, 4242, 'DelayedTaskSche'), 'other');
  assert.equal(threadKind(4246, 4242, 'WorkerThread'), 'worker');
  assert.equal(threadKind(4247, 4242, 'judge'), 'worker');
  assert.deepEqual(parseTaskStat('4243 (V8Worker) S 1 2 3 4 5 6 7 8 9 10 30 20 0', 100), { name: 'V8Worker', cpuSeconds: 0.5 });
});

test('threadOfProfile reads the pid and thread id node puts in a profile\'s name', () => {
  assert.deepEqual(threadOfProfile('/tmp/x/CPU.20261207.141503.4242.3.007.cpuprofile'), { pid: 4242, thread: 3 });
  assert.equal(threadOfProfile('other.cpuprofile'), undefined);
});

test('queryKind: the store\'s own query files and the inserts the client sends', () => {
  const sql = (name: string): string => readFileSync(fileURLToPath(new URL(`../../../../src/store/queries/${name}.sql`, import.meta.url)), 'utf8');
  // The text as the server logs it: the header comments are sent too.
  assert.equal(queryKind(sql('envelope_heads')), 'headsReadBack');
  assert.equal(queryKind(sql('envelope_versions')), 'versionsReadBack');
  assert.equal(queryKind(sql('envelope_progress')), 'progressReadBack');
  assert.equal(queryKind(sql('loop_heads_lost')), 'progressReadBack');
  assert.equal(queryKind(sql('loop_heads_rederive')), 'derivedWrites');
  assert.equal(queryKind('INSERT INTO envelopes (loop_id, seq) FORMAT TabSeparated'), 'envelopesInsert');
  assert.equal(queryKind('INSERT INTO `envelopes`(loop_id) FORMAT RowBinary'), 'envelopesInsert');
  assert.equal(queryKind('INSERT INTO envelopes_local (loop_id) FORMAT TabSeparated'), 'derivedWrites');
  assert.equal(queryKind('INSERT INTO loop_heads FORMAT JSONEachRow'), 'derivedWrites');
  assert.equal(queryKind('CREATE TABLE IF NOT EXISTS schema_migrations (v UInt32) ENGINE = TinyLog'), 'otherQueries');
  assert.equal(queryKind('SELECT 1'), 'otherQueries');
  assert.equal(queryKind('/* c */ -- INSERT INTO envelopes\nSELECT count() FROM loop_heads'), 'headsReadBack');
});

test('serverBudget: per stored row by kind; merges are the server\'s CPU outside the queries; OS CPU where user/system time is absent', () => {
  const b = serverBudget(
    [
      { query: 'INSERT INTO envelopes (a) FORMAT TabSeparated', userUs: 700, systemUs: 300, osCpuUs: 999 },
      { query: 'INSERT INTO loop_heads FORMAT JSONEachRow', userUs: 0, systemUs: 0, osCpuUs: 200 },
      { query: 'SELECT loop_id FROM loop_heads WHERE loop_id IN (1)', userUs: 100, systemUs: 0, osCpuUs: 0 },
    ],
    0.002,
    10,
  );
  assert.equal(b.kinds.envelopesInsert, 100);
  assert.equal(b.kinds.derivedWrites, 20);
  assert.equal(b.kinds.headsReadBack, 10);
  assert.equal(b.kinds.merges, (2000 - 1300) / 10);
  assert.equal(b.totalUsPerRow, 200);
  assert.equal(b.counter, 'mixed');
  assert.equal(serverBudget([], null, 10).kinds.merges, 0);
});

test('parseProcStat and parsePidStat', () => {
  assert.deepEqual(parseProcStat('cpu  10 1 5 100 4 1 2 0 0 0\ncpu0 5 0 2 50 2 0 1 0 0 0\n'), { busy: 19, idle: 104 });
  // A command name with a space and a parenthesis.
  const stat = '4242 (node (x) y) S 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0 1 0';
  assert.equal(parsePidStat(stat, 100), 3);
});
