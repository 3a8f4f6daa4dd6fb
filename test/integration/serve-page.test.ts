/**
 * The page of `agentledger serve` in a real headless browser (docs/dashboards.md
 * "The page"): generated loop-runtime spend (trees, forks, a whale model past 2^64
 * picodollars, a tampered call and a second version), a tree whose LoopIDs
 * are `<img src=x onerror=alert(1)>…`, and a craze session go through Kafka
 * and `ingest`; `rollups rebuild` makes the rollups current; `serve --port 0`
 * runs as the read-only test user. Then, in the browser:
 * 1. the cards and the chart have data, and the page's total (and each day's)
 *    equals `spend --json` to the picodollar;
 * 2. a click on a root shows its tree, each subtree cost equal to `loops
 *    --json --root`;
 * 3. a tampered envelope ingested while the page is open shows as a
 *    chain_integrity alert without a reload (a worker evaluates it);
 * 4. the hostile LoopID is shown as its characters, and no script ran (no
 *    dialog, no <img> made);
 * 5. a table's CSV download equals the table's cells;
 * 6. no request left the origin, no console error, the page under 300 KB
 *    gzipped.
 * Screenshots go to test-artifacts/screenshots/; with AGENTLEDGER_DOCS_SCREENSHOT=1
 * the first (1280×800) also to docs/images/serve.png, the README's.
 */
/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { request } from 'node:http';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { MIGRATIONS_DIR } from '../../src/cli/migrate.js';
import { envelopeJson } from '../../src/demo/traffic/envelope.js';
import { generateSpendTraffic } from '../../src/demo/traffic/index.js';
import { createLogger } from '../../src/observability/logger.js';
import { migrate } from '../../src/migrate/migrate.js';
import { launchBrowser, openPage, screenshot, type OpenedPage } from '../support/browser.js';
import { runToEnd } from '../support/cli-run.js';
import { command, query } from '../support/clickhouse.js';
import { testContext, type TestContext } from '../support/context.js';
import { chain } from '../support/envelope-chain.js';
import { produceEnvelopes } from '../support/envelope-topic.js';
import { runCli, until, type Running } from '../support/processes.js';
import { REPO_ROOT, TEST_READONLY_USER } from '../support/services.js';

const HOSTILE = '<img src=x onerror=alert(1)>';
const HOUR = 3_600_000;
const started = Date.now();
const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

/** infra/demo.sh's `craze push` arguments (journals moved to now, if it moves them). */
const DEMO_CRAZE_PUSH = (/^cli craze push (.+)$/m.exec(readFileSync(join(REPO_ROOT, 'infra/demo.sh'), 'utf8'))?.[1] ?? '').split(' ');
const LONG_SUBJECT = `${HOSTILE}${'x'.repeat(150)}`;
const LONG_DETAIL = `mismatch at seq 7: carried hash ${'ab'.repeat(32)} != recomputed ${'cd'.repeat(32)}; the envelopes of the loop after seq 7 are not counted as verified spend until it is repaired`;

let ctx: TestContext;
let serve: Running;
let base: string;
let browser: Browser;
let opened: OpenedPage;
let page: Page;
const extra: Running[] = [];

/** Spend traffic that started three hours ago (inside every range of the page), and a small tree with hostile LoopIDs. */
const traffic = generateSpendTraffic({ seed: 11, roots: 3, startTime: iso(Date.now() - 3 * HOUR) });
const hostile = generateSpendTraffic({ seed: 12, roots: 1, whaleCalls: 0, tamper: false, secondVersion: false, forks: 0, idPrefix: HOSTILE, startTime: iso(Date.now() - 2 * HOUR) });

async function cli(args: readonly string[]): Promise<string> {
  const r = await runToEnd(args, ctx.env, { timeoutMs: 60_000 });
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

before(async () => {
  ctx = await testContext('serve_page', {
    AGENTLEDGER_ROLLUP_SWEEP_MS: '1000',
    AGENTLEDGER_ALERT_SWEEP_MS: '1000',
    AGENTLEDGER_ALERT_EVALUATE_GAP_MS: '200',
  });
  await migrate(ctx.config.clickhouse, MIGRATIONS_DIR, createLogger('error'));
  const at = (ms: number): string => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
  await command(
    ctx,
    `INSERT INTO craze_events (session_id, incarnation, seq, at, provider, model, report, cost_pico, input_tokens, output_tokens, unpriced, verdict) VALUES
     ('page-craze-1', 'i1', 1, '${at(Date.now() - HOUR)}', 'craze-provider', 'craze-model', 1, 1234567890123, 100, 20, 0, 'ok'),
     ('page-craze-1', 'i1', 2, '${at(Date.now() - HOUR + 60_000)}', 'craze-provider', 'craze-model', 1, 7, 3, 1, 0, 'ok')`,
  );
  // A chain_integrity alert whose subject is a long hostile LoopID and whose detail is long prose: the layout test's.
  await command(
    ctx,
    `INSERT INTO alerts (rule, subject, transition_key, notification, state, severity, fired_at_ms, resolved_at_ms, at_ms, notifications, detail, recorded_at) VALUES
     ('chain_integrity', '${LONG_SUBJECT}', 'page-layout', 'page-layout', 'firing', 'critical', ${Date.now() - 60_000}, 0, ${Date.now() - 60_000}, 1, '${LONG_DETAIL}', now())`,
  );
  await produceEnvelopes(ctx, [...traffic.records, ...hostile.records]);
  // What the demo ships of craze, exactly as infra/demo.sh pushes it.
  const pushed = await runToEnd(['craze', 'push', ...DEMO_CRAZE_PUSH], ctx.env, { timeoutMs: 60_000, cwd: REPO_ROOT });
  assert.equal(pushed.code, 0, `craze push ${DEMO_CRAZE_PUSH.join(' ')}: ${pushed.stderr}`);
  await cli(['ingest', '--no-migrate', '--idle-exit-ms', '2000']);
  await cli(['rollups', 'rebuild']);
  serve = runCli(['serve', '--port', '0'], {
    ...ctx.env,
    AGENTLEDGER_SERVE_CLICKHOUSE_USER: TEST_READONLY_USER.user,
    AGENTLEDGER_SERVE_CLICKHOUSE_PASSWORD: TEST_READONLY_USER.password,
    AGENTLEDGER_LOG_LEVEL: 'info',
  });
  base = await until('serve says where it listens', 20_000, () => Promise.resolve(/serving url="?(http:\/\/[^\s"]+)/.exec(serve.stderr())?.[1]), [serve]);
  browser = await launchBrowser();
  opened = await openPage(browser, base);
  page = opened.page;
  try {
    await page.waitForFunction(() => document.querySelector('[data-testid="last-refreshed"]')?.textContent?.startsWith('last refreshed') === true, undefined, { timeout: 30_000 });
  } catch (err) {
    const status = await page.locator('[data-testid="status-error"]').innerText();
    assert.fail(`the page did not refresh: ${(err as Error).message}; status: ${status}; page: ${JSON.stringify(opened.record)}; serve: ${serve.stderr().slice(-3000)}`);
  }
});

after(async () => {
  await opened?.close().catch(() => undefined);
  await browser?.close().catch(() => undefined);
  for (const r of [serve, ...extra]) r?.child.kill('SIGTERM');
  await Promise.all([serve, ...extra].map((r) => r?.exited));
  await ctx?.cleanup();
  console.log(`# serve-page.test: ${((Date.now() - started) / 1000).toFixed(1)} s`);
});

const text = (testid: string): Promise<string> => page.locator(`[data-testid="${testid}"]`).first().innerText();
const attr = (testid: string, name: string): Promise<string | null> => page.locator(`[data-testid="${testid}"]`).first().getAttribute(name);
const sum = (xs: readonly string[]): string => xs.reduce((a, b) => a + BigInt(b), 0n).toString();
/** money.js's own text for an amount, from the page (the unit test proves it exact). */
const usd = (pico: string): Promise<string> => page.evaluate((p) => (globalThis as unknown as { agentledgerMoney: { formatUsd(x: string): string } }).agentledgerMoney.formatUsd(p), pico);

/** Waits until the loop tree shows this root. */
async function treeShows(root: string): Promise<void> {
  await page.waitForFunction((r) => document.querySelector('[data-testid="tree-root"]')?.textContent === r, root, { timeout: 15_000 });
}

/** Every row's cell texts of a table, the header first. */
async function cells(testid: string): Promise<string[][]> {
  return page.locator(`[data-testid="${testid}"] tr`).evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll('th, td')].map((c) => c.textContent ?? '')));
}

test('cards and the chart have data; the page total and each day equal `spend --json` to the picodollar', async () => {
  for (const card of ['week', 'month', 'verified', 'unverified', 'calls', 'violations']) {
    const value = await text(`card-${card}-value`);
    assert.ok(value !== '' && value !== '0' && value !== '$0.00', `card ${card}: ${value}`);
  }
  // Unverified: what `loops --json` reports apart; violations: the chain_violations view's rows.
  const loops = JSON.parse(await cli(['loops', '--json'])) as { unverifiedModelCostPicoUsd: string }[];
  assert.equal(await text('card-unverified-value'), await usd(sum(loops.map((l) => l.unverifiedModelCostPicoUsd))));
  const [violations] = await query<{ n: string }>(ctx, 'SELECT count() AS n FROM chain_violations');
  assert.equal(await text('card-violations-value'), String(violations?.n));
  // Today, 7 and 30 days are whole UTC days: what `spend --since <that day>` sums.
  const day = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
  const now = Date.now();
  for (const [card, since] of [['today', day(now)], ['week', day(now - 6 * 86_400_000)], ['month', day(now - 29 * 86_400_000)]] as const) {
    const rows = JSON.parse(await cli(['spend', '--json', '--since', since])) as { costPicoUsd: string }[];
    assert.equal(await text(`card-${card}-value`), await usd(sum(rows.map((r) => r.costPicoUsd))), `card ${card} since ${since}`);
  }
  assert.ok((await page.locator('[data-testid="spend-chart"] canvas').count()) > 0, 'uPlot drew a canvas');
  assert.ok((await cells('series-table')).length > 2, 'several models');
  // The page's range: last 7 days by day, whole UTC days from the first one.
  const since = /, (\d{4}-\d{2}-\d{2}) 00:00 to /.exec(await text('series-caption'))?.[1];
  assert.ok(since, await text('series-caption'));
  const spend = JSON.parse(await cli(['spend', '--json', '--since', since])) as { costPicoUsd: string; calls: number }[];
  const want = sum(spend.map((r) => r.costPicoUsd));
  assert.ok(BigInt(want) > 2n ** 64n, 'the whale passes 2^64 picodollars');
  assert.equal(await attr('series-total', 'data-pico'), want);
  assert.equal(await text('series-total'), await usd(want));
  assert.equal(await text('series-calls'), String(spend.reduce((a, r) => a + r.calls, 0)));
  // Each day of the buckets table equals spend --by day's.
  const days = new Map<string, bigint>();
  for (const r of JSON.parse(await cli(['spend', '--json', '--by', 'day', '--since', since])) as { day: string; costPicoUsd: string }[]) {
    days.set(r.day, (days.get(r.day) ?? 0n) + BigInt(r.costPicoUsd));
  }
  const rows = (await cells('buckets-table')).slice(1);
  assert.deepEqual(rows.map((r) => r[0]).sort(), [...days.keys()].sort());
  for (const r of rows) assert.equal(r[2], await usd(days.get(r[0]!)!.toString()), `day ${r[0]}`);
  await page.evaluate(() => window.scrollTo(0, 0));
  await screenshot(page, 'serve-cards-charts');
  // The README's picture, only when asked: a test run leaves tracked files as they were.
  if (process.env['AGENTLEDGER_DOCS_SCREENSHOT'] === '1') await page.screenshot({ path: `${REPO_ROOT}/docs/images/serve.png` });
});

test('an alert\'s detail gets the width at 1400 and 1000 px; a long hostile subject breaks inside its cell', async () => {
  try {
    for (const width of [1400, 1000]) {
      await page.setViewportSize({ width, height: 900 });
      const m = await page.evaluate((subject) => {
        const row = [...document.querySelectorAll('[data-testid="alerts-table"] tbody tr')].find((tr) => tr.children[3]?.textContent === subject);
        if (!row) return null;
        const detail = row.children[6] as HTMLElement;
        const clip = detail.querySelector('.clip') as HTMLElement;
        const scroll = detail.closest('.scroll') as HTMLElement;
        return {
          detailWidth: detail.getBoundingClientRect().width,
          lines: Math.round(clip.scrollHeight / parseFloat(getComputedStyle(clip).lineHeight)),
          subjectWidth: (row.children[3] as HTMLElement).getBoundingClientRect().width,
          overflow: scroll.scrollWidth - scroll.clientWidth,
        };
      }, LONG_SUBJECT);
      assert.ok(m, 'the planted alert is listed');
      // The detail is ~230 characters: a few lines of prose, not a column of a few characters per line.
      // (Before, in a half-width panel: 58 px and some 30 lines at 1400 px.)
      assert.ok(m.detailWidth >= (width === 1400 ? 500 : 300), `${width} px: detail ${JSON.stringify(m)}`);
      assert.ok(m.lines <= (width === 1400 ? 4 : 8), `${width} px: detail ${JSON.stringify(m)}`);
      assert.ok(m.subjectWidth <= 320, `${width} px: the subject breaks inside its cell ${JSON.stringify(m)}`);
      assert.ok(m.overflow <= 1, `${width} px: the table fits its panel ${JSON.stringify(m)}`);
      await page.locator('[data-testid="alerts-table"]').scrollIntoViewIfNeeded();
      await screenshot(page, `serve-alerts-${width}`);
    }
  } finally {
    await page.setViewportSize({ width: 1280, height: 800 });
  }
});

test('the craze sessions the demo ships show in the page\'s default range', async () => {
  const stored = JSON.parse(await cli(['sessions', '--json'])) as { sessionId: string }[];
  assert.equal(stored.length, 4, 'the demo\'s three sessions and page-craze-1');
  assert.equal(await page.locator('[data-testid="filter-range"]').inputValue(), '7d', 'the default range');
  const rows = (await cells('sessions-table')).slice(1).map((r) => r[0]);
  assert.deepEqual(rows.sort(), stored.map((r) => r.sessionId).sort());
});

test('the log scale gives every small key a readable bar beside the whale, axis in dollars, kept in the URL', async () => {
  type Chart = { barHeights(): Record<string, number> };
  const heights = (p: Page): Promise<Record<string, number>> => p.evaluate(() => (globalThis as unknown as { agentledgerChart: Chart }).agentledgerChart.barHeights());
  const keys = (await cells('series-table')).slice(1).filter((r) => r[2] !== '$0.00').map((r) => r[0]!);
  assert.ok(keys.length > 3, JSON.stringify(keys));
  const linear = await heights(page);
  assert.ok(keys.some((k) => linear[k]! < 1), `stacked, the whale flattens a key: ${JSON.stringify(linear)}`);
  await page.locator('[data-testid="chart-log"]').check();
  assert.equal(new URL(page.url()).searchParams.get('scale'), 'log');
  const log = await heights(page);
  for (const k of keys) assert.ok(log[k]! >= 10, `log: ${k} ${JSON.stringify(log)}`);
  await page.locator('[data-testid="spend-chart"]').scrollIntoViewIfNeeded();
  await screenshot(page, 'serve-chart-log');
  // The axis labels are dollars, powers of ten only.
  const labels = await page.evaluate(() => {
    const u = (globalThis as unknown as { agentledgerChart: { plot(): { axes: { _values: (string | null)[] }[] } } }).agentledgerChart.plot();
    return u.axes[1]!._values.filter((v) => v !== '' && v !== null);
  });
  assert.ok(labels.length >= 3 && labels.every((l) => /^\$(1|10|100)(\.0+)?[kMBT]?$|^\$0\.0*1$/.test(l!)), JSON.stringify(labels));
  // A link keeps it: a page opened at ?scale=log draws the log scale.
  const other = await openPage(browser, new URL('/?scale=log', base).href);
  try {
    await other.page
      .waitForFunction(() => document.querySelector('[data-testid="last-refreshed"]')?.textContent?.startsWith('last refreshed') === true, undefined, { timeout: 30_000 })
      .catch(async (err: Error) => assert.fail(`${err.message}; status: ${await other.page.locator('[data-testid="status-error"]').innerText()}; page: ${JSON.stringify(other.record)}`));
    assert.equal(await other.page.locator('[data-testid="chart-log"]').isChecked(), true);
    const again = await heights(other.page);
    for (const k of keys) assert.ok(again[k]! >= 10, `opened at ?scale=log: ${k} ${JSON.stringify(again)}`);
  } finally {
    await other.close();
  }
  await page.locator('[data-testid="chart-log"]').uncheck();
  assert.equal(new URL(page.url()).searchParams.get('scale'), null);
});

test('the model and loop name filters narrow the chart and the roots to exactly those calls', async () => {
  const since = /, (\d{4}-\d{2}-\d{2}) 00:00 to /.exec(await text('series-caption'))?.[1];
  assert.ok(since);
  const byModel = JSON.parse(await cli(['spend', '--json', '--by', 'model', '--since', since])) as { model: string; costPicoUsd: string }[];
  const byName = JSON.parse(await cli(['spend', '--json', '--by', 'name', '--since', since])) as { name: string; costPicoUsd: string }[];
  const model = 'gpt-4.1';
  const name = byName.find((r) => r.name !== '')!.name;
  const cases: [string, string, string][] = [
    ['filter-model', model, sum(byModel.filter((r) => r.model === model).map((r) => r.costPicoUsd))],
    ['filter-name', name, sum(byName.filter((r) => r.name === name).map((r) => r.costPicoUsd))],
  ];
  for (const [input, value, want] of cases) {
    await page.locator(`[data-testid="${input}"]`).fill(value);
    await page.locator(`[data-testid="${input}"]`).press('Enter');
    await page.waitForFunction((w) => document.querySelector('[data-testid="series-total"]')?.getAttribute('data-pico') === w, want, { timeout: 15_000 });
    // The roots' costs are those calls' only: they add up to the same total.
    await page.waitForFunction(
      (w) => {
        const texts = [...document.querySelectorAll('[data-testid="roots-table"] tbody tr td:nth-child(5)')].map((td) => td.textContent ?? '');
        const money = (globalThis as unknown as { agentledgerMoney: { sum(x: string[]): string; parseUsd(t: string): string } }).agentledgerMoney;
        return texts.length > 0 && money.sum(texts.map((t) => money.parseUsd(t))) === w;
      },
      want,
      { timeout: 15_000 },
    );
    await page.locator(`[data-testid="${input}"]`).fill('');
    await page.locator(`[data-testid="${input}"]`).press('Enter');
  }
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="root-link"]').length > 3, undefined, { timeout: 15_000 });
});

test('a click on a root shows its loop tree, each subtree cost equal to `loops --json --root`', async () => {
  const root = traffic.expected.loops.find((l) => l.parentLoopId === '' && l.forkedFrom === '')?.loopId;
  assert.ok(root);
  await page.locator(`[data-testid="root-link"][data-root="${root}"]`).click();
  await treeShows(root);
  const loops = JSON.parse(await cli(['loops', '--json', '--root', root])) as { loopId: string; subtreeModelCostPicoUsd: string; modelCostPicoUsd: string }[];
  const top = loops.find((l) => l.loopId === root);
  assert.ok(top && loops.length > 1);
  assert.equal(await attr('tree-subtree-cost', 'data-pico'), top.subtreeModelCostPicoUsd);
  const rows = (await cells('tree-table')).slice(1);
  assert.deepEqual(rows.map((r) => r[0]).sort(), loops.map((l) => l.loopId).sort(), 'the same loops');
  for (const l of loops) {
    const row = rows.find((r) => r[0] === l.loopId)!;
    assert.equal(row[5], await usd(l.modelCostPicoUsd), `own cost of ${l.loopId}`);
    assert.equal(row[6], await usd(l.subtreeModelCostPicoUsd), `subtree cost of ${l.loopId}`);
  }
  await page.locator('[data-testid="tree-panel"]').scrollIntoViewIfNeeded();
  await screenshot(page, 'serve-loop-tree');
});

test('a hostile LoopID is shown as its characters; no script ran', async () => {
  const root = hostile.expected.loops.find((l) => l.parentLoopId === '')!.loopId;
  assert.ok(root.startsWith(HOSTILE));
  await page.locator('[data-testid="root-link"]').filter({ hasText: HOSTILE }).first().click();
  await treeShows(root);
  const body = await page.locator('body').innerText();
  assert.ok(body.includes(root), 'the LoopID as text');
  assert.equal(await page.locator('img').count(), 0, 'no <img> element was made from it');
  assert.deepEqual(opened.record.dialogs, [], 'no dialog: no injected script ran');
  // The recorder can fail: a script the page did not mean to run is seen.
  const probe = await openPage(browser, 'about:blank');
  await probe.page.evaluate(() => {
    const img = document.createElement('img');
    img.setAttribute('onerror', 'alert(1)');
    img.src = 'data:,x';
    document.body.appendChild(img);
  });
  await until('the probe dialog', 5000, () => Promise.resolve(probe.record.dialogs.length > 0 ? true : undefined));
  await probe.close();
});

test('a tampered envelope ingested while the page is open shows as an alert, without a reload', { timeout: 120_000 }, async () => {
  await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));
  extra.push(runCli(['worker'], ctx.env));
  extra.push(runCli(['ingest', '--no-migrate'], ctx.env));
  const t = Date.now() - 60_000;
  const loop = 'page-tampered-late';
  const links = chain(loop, [
    [iso(t), 'LoopStarted', JSON.stringify({ name: 'late' })],
    [iso(t + 1000), 'IterationStarted', JSON.stringify({ iteration: 1 })],
    [iso(t + 2000), 'IterationStarted', JSON.stringify({ iteration: 2 })],
  ]);
  const original = JSON.parse(links[1]!.value.toString()) as { Hash: number[] };
  links[1] = { key: loop, value: Buffer.from(envelopeJson(loop, 2, iso(t + 1000), 'IterationStarted', Buffer.from('{"iteration":99}'), Buffer.from(original.Hash))) };
  await produceEnvelopes(ctx, links);
  await page.waitForFunction(
    (l) => [...document.querySelectorAll('[data-testid="alerts-table"] tr')].some((tr) => tr.textContent?.includes('chain_integrity') && tr.textContent.includes(l)),
    loop,
    { timeout: 90_000, polling: 250 },
  );
  assert.equal(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded), true, 'the same page, not reloaded');
  await page.waitForFunction((l) => document.querySelector('[data-testid="violations-table"]')?.textContent?.includes(l) === true, loop, { timeout: 15_000 });
  // Its evidence: the hash it carries beside the one recomputed; a fork's first version beside its second.
  const violations = (await cells('violations-table')).slice(1);
  const tampered = violations.find((r) => r[0] === loop);
  assert.ok(tampered, JSON.stringify(violations));
  assert.equal(tampered[2], 'mismatch');
  assert.match(tampered[5]!, /^[0-9a-f]{64}$/);
  assert.match(tampered[6]!, /^[0-9a-f]{64}$/);
  assert.notEqual(tampered[5], tampered[6]);
  const fork = violations.find((r) => r[2] === 'fork');
  assert.ok(fork, 'the second version is listed');
  assert.match(fork[8]!, /^stored first: hash [0-9a-f]{64}, ModelCalled at /);
  assert.ok(fork[7]!.startsWith('{'), 'the second version\'s payload beside it');
  await page.locator('[data-testid="alerts-table"]').scrollIntoViewIfNeeded();
  await screenshot(page, 'serve-alert');
});

/** RFC 4180 fields and records. */
function parseCsv(textIn: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < textIn.length; i++) {
    const c = textIn[i];
    if (quoted) {
      if (c === '"' && textIn[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\r' && textIn[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += c;
  }
  assert.equal(field + row.join(''), '', 'the CSV ends with CRLF');
  return rows;
}

test('a table\'s CSV download equals the table\'s cells', async () => {
  for (const table of ['roots', 'tree', 'violations']) {
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator(`[data-testid="${table}-csv"]`).click()]);
    assert.equal(download.suggestedFilename(), `${table}.csv`);
    const csv = await readFile(await download.path(), 'utf8');
    assert.deepEqual(parseCsv(csv), await cells(`${table}-table`), table);
  }
});

/** The bytes an asset takes on the wire when the browser asks for gzip. */
function wireBytes(path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    request(new URL(path, base), { headers: { 'accept-encoding': 'gzip' } }, (res) => {
      let n = 0;
      res.on('data', (d: Buffer) => (n += d.length));
      res.on('end', () => resolve(n));
    })
      .on('error', reject)
      .end();
  });
}

test('no request to another origin, no console error, no uncaught error; the page is under 300 KB gzipped', async () => {
  assert.deepEqual(opened.record.otherOrigin, []);
  assert.deepEqual(opened.record.consoleErrors, []);
  assert.deepEqual(opened.record.pageErrors, []);
  assert.deepEqual(opened.record.dialogs, []);
  const assets = ['/', '/assets/app.js', '/assets/money.js', '/assets/dom.js', '/assets/tables.js', '/assets/chart.js', '/assets/panels.js', '/assets/app.css', '/assets/uPlot.iife.min.js', '/assets/uPlot.min.css', '/favicon.ico'];
  const bytes = (await Promise.all(assets.map(wireBytes))).reduce((a, b) => a + b, 0);
  console.log(`# page assets, gzipped: ${bytes} bytes`);
  assert.ok(bytes < 300_000, `${bytes} bytes`);
});
