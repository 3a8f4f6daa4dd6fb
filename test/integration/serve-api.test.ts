/**
 * `agentledger serve`'s API and its guards (issue 21) against the real stack:
 * demo traffic (chains with planted violations, spend trees) and craze
 * journals ingested, then
 * - every read command's `/api/<command>?…` body equals, byte for byte, what
 *   `agentledger <command> --json …` prints on the same data;
 * - a bad option is a 400 with one line of JSON, never a stack trace;
 * - GET and HEAD only; a non-loopback Host is refused; with a token nothing
 *   is answered without it, and the token is never printed;
 * - serve refuses a ClickHouse user that may write;
 * - the page: CSP on every answer, no inline script or style, nothing
 *   outside the fixed list of files (no path out of it), under 300 KB gzipped.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, test } from 'node:test';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { createLogger } from '../../src/observability/logger.js';
import { migrate } from '../../src/migrate/migrate.js';
import { runToEnd } from '../support/cli-run.js';
import { testContext, type TestContext } from '../support/context.js';
import { CRAZE_FIXTURES } from '../support/craze-events.js';
import { runCli } from '../support/processes.js';
import { serveEnv, startServe, type Served } from '../support/serve.js';

const TOKEN = 'serve-api-token-0123456789';

let ctx: TestContext;
let served: Served;

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/** One request as a client sends it, with any method, Host and path (fetch() would not send some of them). */
function ask(origin: string, path: string, options: { method?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  const url = new URL(origin);
  const noHost = options.headers?.['host'] === '';
  const headers = Object.fromEntries(Object.entries(options.headers ?? {}).filter(([k]) => !(noHost && k === 'host')));
  return new Promise((resolve, reject) => {
    // The path as given: `..` and `%2e` reach the server unnormalised.
    const req = request(
      // Host '' stands for no Host header at all.
      { host: url.hostname, port: url.port, path, method: options.method ?? 'GET', headers, setHost: !noHost },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** What the CLI prints for these arguments, as the tests' own (writing) user. */
async function cli(args: readonly string[]): Promise<string> {
  const r = await runToEnd(args, ctx.env);
  assert.equal(r.code, 0, `agentledger ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** A root with children, for `loops --root`. */
let treeRoot = '';

before(async () => {
  ctx = await testContext('serve_api');
  await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, createLogger('warn'));
  await cli(['produce-demo', '--loops', '24', '--envelopes', '8', '--violations', '--spend-roots', '3', '--seed', '21']);
  await cli(['craze', 'push', CRAZE_FIXTURES]);
  const ingest = runCli(['ingest', '--no-migrate', '--idle-exit-ms', '3000'], ctx.env);
  assert.equal(await ingest.exited, 0, ingest.stderr());
  await cli(['rollups', 'sweep']);
  const loops = JSON.parse(await cli(['loops', '--json'])) as { loopId: string; parentLoopId: string; rootLoopId: string }[];
  treeRoot = loops.find((l) => loops.some((c) => c.parentLoopId === l.loopId))?.loopId ?? '';
  assert.ok(treeRoot, 'the spend roots have children');
  served = await startServe(ctx.env);
});

after(async () => {
  await served?.stop();
  await ctx?.cleanup();
});

/** Query strings and the command lines they stand for. */
const SAME: readonly (readonly [string, string, readonly string[]])[] = [
  ['spend', '', []],
  ['spend', 'by=model', ['--by', 'model']],
  ['spend', 'by=day', ['--by', 'day']],
  ['spend', 'by=name', ['--by', 'name']],
  ['spend', 'by=root&source=runtime', ['--by', 'root', '--source', 'runtime']],
  ['spend', 'by=source&since=2000-01-01&until=2100-01-01', ['--by', 'source', '--since', '2000-01-01', '--until', '2100-01-01']],
  ['spend', 'source=craze', ['--source', 'craze']],
  ['spend', 'by=name&rollups', ['--by', 'name', '--rollups']],
  ['spend', 'by=day&rollups=&since=2000-01-01', ['--by', 'day', '--rollups', '--since', '2000-01-01']],
  ['spend', 'rollups&by=root', ['--rollups', '--by', 'root']],
  ['spend', 'by=root&limit=2', ['--by', 'root', '--limit', '2']],
  ['spend', 'by=day&rollups&limit=1', ['--by', 'day', '--rollups', '--limit', '1']],
  ['loops', '', []],
  ['loops', 'limit=5', ['--limit', '5']],
  ['loops', 'id-prefix=demo', ['--id-prefix', 'demo']],
  ['sessions', '', []],
  ['sessions', 'limit=1&since=2000-01-01', ['--limit', '1', '--since', '2000-01-01']],
  ['alerts', 'state=all', ['--state', 'all']],
  ['alerts', 'rule=chain_integrity&limit=3', ['--rule', 'chain_integrity', '--limit', '3']],
  ['report', '', []],
  ['report', 'limit=3', ['--limit', '3']],
];

test('every read command: /api/<command>?… is byte for byte what `<command> --json …` prints', async () => {
  const rootCase = ['loops', `root=${encodeURIComponent(treeRoot)}`, ['--root', treeRoot]] as const;
  let nonEmpty = 0;
  for (const [command, query, args] of [...SAME, rootCase]) {
    const answer = await ask(served.origin, `/api/${command}${query ? `?${query}` : ''}`);
    assert.equal(answer.status, 200, `${command}?${query}: ${answer.body}`);
    assert.match(String(answer.headers['content-type']), /^application\/json/);
    const printed = await cli([command, '--json', ...args]);
    assert.equal(answer.body, printed, `${command}?${query}`);
    if (answer.body.length > 10) nonEmpty++;
  }
  // Not a comparison of empty answers: nearly every case has rows.
  assert.ok(nonEmpty >= SAME.length - 2, `${nonEmpty} of ${SAME.length + 1} answers have rows`);
});

test('spend --rollups after a sweep: the same rows as the read of every envelope, by model, day, name, root and source', async () => {
  for (const by of ['model', 'day', 'name', 'root', 'source']) {
    const raw = await cli(['spend', '--json', '--by', by]);
    assert.ok(raw.length > 10, by);
    assert.equal(await cli(['spend', '--json', '--by', by, '--rollups']), raw, by);
  }
});

test('spend --limit N: the first N rows of the whole answer, raw and from the rollups', async () => {
  for (const by of ['model', 'day', 'root']) {
    const every = JSON.parse(await cli(['spend', '--json', '--by', by])) as unknown[];
    assert.ok(every.length > 2, `${by}: enough rows to cut (${every.length})`);
    for (const limit of [1, 2, every.length, every.length + 5]) {
      const want = `${JSON.stringify(every.slice(0, limit))}\n`;
      assert.equal(await cli(['spend', '--json', '--by', by, '--limit', String(limit)]), want, `${by} --limit ${limit}`);
      assert.equal(await cli(['spend', '--json', '--by', by, '--limit', String(limit), '--rollups']), want, `${by} --limit ${limit} --rollups`);
    }
    assert.equal(await cli(['spend', '--json', '--by', by, '--limit', '0']), `${JSON.stringify(every)}\n`, `${by} --limit 0 is every row`);
  }
});

test('a bad option is a 400 with one line of JSON naming it, never a stack trace', async () => {
  const cases: readonly (readonly [string, RegExp])[] = [
    ['/api/spend?by=nope', /--by "nope"/],
    ['/api/spend?bogus=1', /bogus/],
    ['/api/loops?limit=-1', /--limit/],
    ['/api/spend?limit=two', /--limit/],
    ['/api/loops?limit=1e3', /--limit/],
    ['/api/sessions?since=yesterday-ish', /since|yesterday/],
    ['/api/spend?json=1', /json is implied/],
    ['/api/spend?by=model&by=day', /by given twice/],
    ['/api/spend?%3Cimg%3E=1', /not an option name/],
    ['/api/report?limit', /limit/],
    ['/api/spend?json', /json is implied/],
    ['/api/spend?rollups=yes', /Unexpected argument 'yes'/],
  ];
  for (const [path, reason] of cases) {
    const answer = await ask(served.origin, path);
    assert.equal(answer.status, 400, `${path}: ${answer.body}`);
    assert.equal(answer.body.split('\n').length, 2, `${path}: one line: ${answer.body}`);
    const { error } = JSON.parse(answer.body) as { error: string };
    assert.match(error, reason, path);
    assert.doesNotMatch(answer.body, /\bat .*\.js:\d+|Error:/, `${path}: no stack`);
  }
  const missing = await ask(served.origin, '/api/nothing-here');
  assert.equal(missing.status, 404);
  assert.match((JSON.parse(missing.body) as { error: string }).error, /no endpoint/);
});

test('read-only: every method but GET and HEAD is a 405, on the API and the page', async () => {
  for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
    for (const path of ['/api/spend', '/api/report', '/']) {
      const answer = await ask(served.origin, path, { method });
      assert.equal(answer.status, 405, `${method} ${path}`);
      assert.equal(answer.headers['allow'], 'GET, HEAD');
    }
  }
  const head = await ask(served.origin, '/api/spend', { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.equal(head.body, '');
});

test('read-only: serve will not read as a ClickHouse user that may write', async () => {
  const r = await runToEnd(['serve', '--port', '0'], serveEnv(ctx.env, { AGENTLEDGER_SERVE_CLICKHOUSE_USER: ctx.env['AGENTLEDGER_CLICKHOUSE_USER']!, AGENTLEDGER_SERVE_CLICKHOUSE_PASSWORD: ctx.env['AGENTLEDGER_CLICKHOUSE_PASSWORD']! }), { timeoutMs: 30_000 });
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.match(r.stderr, /AGENTLEDGER_SERVE_CLICKHOUSE_USER=agentledger_test may write to ClickHouse \(readonly=0\)/);
});

test('bound to loopback: a request for another Host (DNS rebinding) is refused; loopback names are answered', async () => {
  const port = new URL(served.origin).port;
  for (const host of ['evil.example', `evil.example:${port}`, `10.0.0.1:${port}`, `127.0.0.1.evil.example:${port}`]) {
    const answer = await ask(served.origin, '/api/report', { headers: { host } });
    assert.equal(answer.status, 421, `Host ${JSON.stringify(host)}: ${answer.body.slice(0, 200)}`);
  }
  // No Host at all: node:http itself refuses an HTTP/1.1 request without one.
  assert.equal((await ask(served.origin, '/api/report', { headers: { host: '' } })).status, 400);
  for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]) {
    const answer = await ask(served.origin, '/api/report', { headers: { host } });
    assert.equal(answer.status, 200, `Host ${host}`);
  }
});

test('with AGENTLEDGER_SERVE_TOKEN: nothing without the token (bearer or basic), and the token is never printed', async () => {
  const guarded = await startServe(ctx.env, { AGENTLEDGER_SERVE_TOKEN: TOKEN, AGENTLEDGER_LOG_LEVEL: 'debug' });
  try {
    for (const headers of [{} as Record<string, string>, { authorization: 'Bearer wrong-token-0123456789' }, { authorization: `Bearer ${TOKEN}x` }, { authorization: `Basic ${Buffer.from(`u:${TOKEN.slice(1)}`).toString('base64')}` }, { authorization: TOKEN }]) {
      for (const path of ['/', '/api/spend', '/assets/app.js']) {
        const answer = await ask(guarded.origin, path, { headers });
        assert.equal(answer.status, 401, `${path} with ${JSON.stringify(headers)}`);
        assert.match(String(answer.headers['www-authenticate']), /^Basic realm="agentledger"/);
      }
    }
    const bearer = await ask(guarded.origin, '/api/report', { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(bearer.status, 200);
    assert.equal(bearer.body, await cli(['report', '--json']));
    const basic = await ask(guarded.origin, '/', { headers: { authorization: `Basic ${Buffer.from(`anyone:${TOKEN}`).toString('base64')}` } });
    assert.equal(basic.status, 200);
    const config = await runToEnd(['config', '--json'], serveEnv(ctx.env, { AGENTLEDGER_SERVE_TOKEN: TOKEN }));
    assert.equal(config.code, 0);
    assert.match(config.stdout, /"token":"\(set\)"/);
    for (const text of [config.stdout, config.stderr, guarded.running.stderr()]) assert.ok(!text.includes(TOKEN), 'the token is not printed');
    const tooShort = await runToEnd(['serve', '--port', '0'], serveEnv(ctx.env, { AGENTLEDGER_SERVE_TOKEN: 'short' }));
    assert.equal(tooShort.code, 2);
    assert.equal(tooShort.stderr.trim(), 'agentledger: invalid setting AGENTLEDGER_SERVE_TOKEN=(hidden): expected at least 16 characters');
  } finally {
    assert.equal(await guarded.stop(), 0);
  }
});

test('the page: CSP and nosniff on every answer, no inline script or style, only its own files, under 300 KB gzipped', async () => {
  const page = await ask(served.origin, '/');
  assert.equal(page.status, 200);
  for (const answer of [page, await ask(served.origin, '/api/report'), await ask(served.origin, '/api/spend?by=nope'), await ask(served.origin, '/nowhere')]) {
    const csp = String(answer.headers['content-security-policy']);
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:|\*/);
    assert.equal(answer.headers['x-content-type-options'], 'nosniff');
  }
  // Inline code would be refused by the CSP, so the page would be broken, not unsafe; it must have none.
  assert.doesNotMatch(page.body, /<script(?![^>]*\bsrc=)[^>]*>/i, 'every script has a src');
  assert.doesNotMatch(page.body, /\son[a-z]+\s*=|\sstyle\s*=|<style/i, 'no inline handler or style');
  const referenced = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] ?? '');
  assert.ok(referenced.length >= 3, referenced.join(' '));
  let bytes = Buffer.byteLength(page.body);
  for (const path of referenced) {
    assert.match(path, /^\/[^/]/, `${path}: from this origin`);
    const asset = await new Promise<{ status: number; encoding: string | undefined; length: number }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: new URL(served.origin).port, path, headers: { 'accept-encoding': 'gzip' } }, (res) => {
        let length = 0;
        res.on('data', (d: Buffer) => (length += d.length));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, encoding: res.headers['content-encoding'], length }));
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(asset.status, 200, path);
    bytes += asset.length;
  }
  assert.ok(bytes < 300 * 1024, `the page with its files: ${bytes} bytes`);
  for (const path of ['/assets/../package.json', '/assets/%2e%2e/package.json', '/%2e%2e/%2e%2e/package.json', '/src/serve/page/app.js', '/assets/app.js.map', '//etc/passwd']) {
    const answer = await ask(served.origin, path);
    assert.equal(answer.status, 404, path);
    assert.doesNotMatch(answer.body, /"name":\s*"agentledger"|root:/);
  }
});
