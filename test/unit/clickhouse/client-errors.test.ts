/**
 * What a ClickHouse client failure says: a refused login, an unreachable
 * server and a server that is not ClickHouse are one line naming the setting
 * to check, with the original code and cause kept; query errors pass through.
 * And the client options the settings make (credentials, a private CA).
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { parseConfig } from '../../../src/config/index.js';
import { ClickHouseUnavailableError, clickhouseClientOptions, credentials, explainClickHouseError, quoteReply } from '../../../src/clickhouse/client.js';
import { clickhouseErrorCode } from '../../../src/clickhouse/errors.js';

let server: Server;
let base = '';
let reply: { status: number; body: string } = { status: 200, body: 'Ok.\n' };
before(async () => {
  server = createServer((_req, res) => res.writeHead(reply.status).end(reply.body));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => server.close());

const settings = (url: string, extra: Record<string, string> = {}) => parseConfig({ AGENTLEDGER_CLICKHOUSE_URL: url, ...extra }).clickhouse;

test('a refused login names the user, in both error formats, and keeps the code', async () => {
  const current = Object.assign(new Error('Authentication failed: password is incorrect'), { code: '516', type: 'AUTHENTICATION_FAILED' });
  const old = new Error('Code: 193, e.displayText() = DB::Exception: Wrong password for user agentledger, e.what() = DB::Exception');
  const unknownUser = new Error('Code: 192, e.displayText() = DB::Exception: Unknown user nobody, e.what() = DB::Exception');
  for (const [err, code] of [[current, 516], [old, 193], [unknownUser, 192]] as const) {
    const explained = await explainClickHouseError(err, settings('http://writer:pw@127.0.0.1:8123'));
    assert.ok(explained instanceof ClickHouseUnavailableError);
    assert.equal(
      explained.message,
      `ClickHouse at http://writer:***@127.0.0.1:8123/ refused user "writer": authentication failed (code ${code}): check AGENTLEDGER_CLICKHOUSE_USER and AGENTLEDGER_CLICKHOUSE_PASSWORD (or the user and password in AGENTLEDGER_CLICKHOUSE_URL)`,
    );
    assert.equal(clickhouseErrorCode(explained), code);
    assert.equal(explained.cause, err);
  }
});

test('a query error passes through as it is', async () => {
  const syntax = new Error('Code: 62, e.displayText() = DB::Exception: Syntax error');
  assert.equal(await explainClickHouseError(syntax, settings(base)), syntax);
});

test('nothing answering: one line with the URL, password hidden; the socket error code is kept', async () => {
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
  const explained = await explainClickHouseError(refused, settings('http://u:Secret-pw@127.0.0.1:1'));
  assert.ok(explained instanceof ClickHouseUnavailableError);
  assert.equal(explained.message, 'ClickHouse at http://u:***@127.0.0.1:1/ did not answer (connect ECONNREFUSED 127.0.0.1:1): check that it runs and AGENTLEDGER_CLICKHOUSE_URL');
  assert.equal(explained.code, 'ECONNREFUSED');
});

test('something else answering: its HTTP status and first bytes, escaped', async () => {
  reply = { status: 404, body: '<html>\u001b[2J' + 'x'.repeat(200) };
  const explained = await explainClickHouseError(new Error(''), settings(base));
  assert.ok(explained instanceof ClickHouseUnavailableError);
  assert.match(explained.message, /^AGENTLEDGER_CLICKHOUSE_URL http:\/\/127\.0\.0\.1:\d+ is not ClickHouse: GET \/ping answered HTTP 404 "<html>\\u001b\[2Jx+"… \(ClickHouse answers "Ok\."\): check the URL and port$/);
  assert.ok(!explained.message.includes('\u001b'));
});

test('an unexplained error from a server that is ClickHouse passes through', async () => {
  reply = { status: 200, body: 'Ok.\n' };
  const odd = new Error('something odd');
  assert.equal(await explainClickHouseError(odd, settings(base)), odd);
});

test('quoteReply escapes every control character and bounds the length', () => {
  assert.equal(quoteReply('a\u0000\u009b\n'), '"a\\u0000\\u009b\\n"');
  assert.equal(quoteReply('abcdef', 3), '"abc"…');
});

test('credentials in the URL win and are taken out of it; a CA file is read into tls', () => {
  assert.deepEqual(credentials({ url: 'http://w%40x:p%2Fq@h:8123', user: 'agentledger', password: 'other' }), { url: 'http://h:8123/', user: 'w@x', password: 'p/q' });
  assert.deepEqual(credentials({ url: 'http://h:8123', user: 'agentledger', password: 'pw' }), { url: 'http://h:8123/', user: 'agentledger', password: 'pw' });
  const plain = clickhouseClientOptions(settings('http://h:8123', { AGENTLEDGER_CLICKHOUSE_PASSWORD: 'pw' }), 'db');
  assert.equal(plain.url, 'http://h:8123/');
  assert.equal(plain.password, 'pw');
  assert.equal(plain.database, 'db');
  assert.equal(plain.tls, undefined);
  const withCa = clickhouseClientOptions({ ...settings('https://h:8443'), caFile: '/ca.pem' }, undefined, (path) => Buffer.from(`read ${path}`));
  assert.deepEqual(withCa.tls, { ca_cert: Buffer.from('read /ca.pem') });
  assert.equal(withCa.url, 'https://h:8443/');
});
