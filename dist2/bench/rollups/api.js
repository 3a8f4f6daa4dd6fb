/** The API of `agentledger serve` and the Grafana panels' queries, as the bench times them. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expandMacros } from '../../test/support/grafana-macros.js';
import { median } from '../support.js';
import { END_UNIX, env, RUNS } from './options.js';
import { SLOW_WARMUP_MS } from './reads.js';
import { cli, REPO } from './helpers.js';
/** A day or a week before the data's end, as RFC 3339: the loaded month lies in the past, so `--since 7d` (back from now) would find nothing. */
export const SINCE_7D = new Date((END_UNIX - 7 * 86_400) * 1000).toISOString().replace('.000', '');
export const SINCE_30D = new Date((END_UNIX - 30 * 86_400) * 1000).toISOString().replace('.000', '');
export const UNTIL = new Date(END_UNIX * 1000).toISOString().replace('.000', '');
export const SPEND_BYS = ['model', 'day', 'name', 'root', 'source'];
/**
 * Every request step 4 times against `agentledger serve`: the five read
 * commands (what `agentledger <command> --json --<opt> <val>` prints) with
 * the options a page or a person uses, and the page's own endpoints
 * (src/serve/endpoints.ts) with realistic parameters. A 404 is an endpoint
 * not there yet: shown as "missing", not a failure. Extend here.
 */
export const API_REQUESTS = [
    { name: 'spend --by model', path: '/api/spend?by=model' },
    { name: 'spend --by day', path: '/api/spend?by=day' },
    { name: 'spend --by name', path: '/api/spend?by=name' },
    { name: 'spend --by root', path: '/api/spend?by=root' },
    { name: 'spend --by source', path: '/api/spend?by=source' },
    { name: 'spend --by model --since 7d', path: `/api/spend?by=model&since=${SINCE_7D}` },
    { name: 'spend --by day --since 7d', path: `/api/spend?by=day&since=${SINCE_7D}` },
    { name: 'spend --by name --since 7d', path: `/api/spend?by=name&since=${SINCE_7D}` },
    { name: 'spend --by root --since 7d', path: `/api/spend?by=root&since=${SINCE_7D}` },
    { name: 'spend --by source --since 7d', path: `/api/spend?by=source&since=${SINCE_7D}` },
    // The same over the hour rollups (serve takes a boolean option bare: `rollups`, or `rollups=`).
    ...SPEND_BYS.flatMap((by) => [
        { name: `spend --rollups --by ${by}`, path: `/api/spend?rollups&by=${by}` },
        { name: `spend --rollups --by ${by} --since 7d`, path: `/api/spend?rollups&by=${by}&since=${SINCE_7D}` },
    ]),
    // The top consumers: what a page or a report asks, not the whole list of roots.
    { name: 'spend --rollups --by root --limit 100', path: '/api/spend?rollups&by=root&limit=100' },
    { name: 'loops --limit 100', path: '/api/loops?limit=100' },
    { name: 'loops --root ROOT', path: '/api/loops?root={root}' },
    { name: 'sessions', path: '/api/sessions' },
    { name: 'alerts --state all', path: '/api/alerts?state=all' },
    { name: 'report', path: '/api/report' },
    { name: 'overview', path: '/api/overview' },
    { name: 'series hour by model 7d', path: `/api/series?step=hour&by=model&since=${SINCE_7D}&until=${UNTIL}` },
    { name: 'series day by name 30d', path: `/api/series?step=day&by=name&since=${SINCE_30D}&until=${UNTIL}` },
    { name: 'tree root=ROOT', path: '/api/tree?root={root}' },
    { name: 'violations limit=50 since 30d', path: `/api/violations?limit=50&since=${SINCE_30D}` },
    { name: 'reconciliation limit=50', path: '/api/reconciliation?limit=50' },
];
/** A request slower than this is given up (the verdict is long settled). */
export const API_TIMEOUT_MS = 300_000;
/** One warm-up and RUNS timed GETs (one when the warm-up took over SLOW_WARMUP_MS), wall time at the client, the body read whole. */
export async function timeGet(url) {
    const once = async () => {
        const t = performance.now();
        const res = await fetch(url, { signal: AbortSignal.timeout(API_TIMEOUT_MS) });
        const body = await res.text();
        return { ms: performance.now() - t, status: res.status, bytes: Buffer.byteLength(body), body };
    };
    try {
        const warm = await once();
        if (warm.status === 404)
            return { ms: [], medianMs: NaN, warmupMs: warm.ms, rows: 0, status: 404, missing: true };
        if (warm.status !== 200)
            return { ms: [], medianMs: NaN, warmupMs: warm.ms, rows: 0, status: warm.status, error: `HTTP ${warm.status}: ${warm.body.trim().slice(0, 160)}` };
        const ms = [];
        let last = warm;
        for (let i = 0; i < (warm.ms > SLOW_WARMUP_MS ? 1 : RUNS); i++) {
            last = await once();
            ms.push(last.ms);
        }
        let rowCount = 0;
        try {
            const v = JSON.parse(last.body);
            rowCount = Array.isArray(v) ? v.length : 1;
        }
        catch {
            rowCount = last.body.split('\n').filter((l) => l.trim() !== '').length;
        }
        return { ms, medianMs: median(ms), warmupMs: warm.ms, rows: rowCount, status: last.status, bytes: last.bytes };
    }
    catch (err) {
        return { ms: [], medianMs: NaN, warmupMs: NaN, rows: 0, error: err instanceof Error ? err.message.split('\n')[0].slice(0, 200) : String(err) };
    }
}
/** The read-only user serve and the panels read as: the local stack's one for throwaway databases (readonly=1 everywhere). */
export const READONLY_USER = process.env['AGENTLEDGER_SERVE_CLICKHOUSE_USER'] ?? 'agentledger_test_readonly';
export const READONLY_PASSWORD = process.env['AGENTLEDGER_SERVE_CLICKHOUSE_PASSWORD'] ?? (READONLY_USER === 'agentledger_test_readonly' ? 'agentledger_test_readonly' : '');
/**
 * The Grafana ranges step 5 reads every panel over, ending at the data's end
 * (the dashboard's default is the last 24 h): the interval is what Grafana
 * gives a full-width panel (~1000 points), rounded as Grafana rounds it.
 */
export const GRAFANA_RANGES = [
    { name: '24h', seconds: 86_400, intervalSeconds: 60 },
    { name: '7d', seconds: 7 * 86_400, intervalSeconds: 600 },
    { name: '30d', seconds: 30 * 86_400, intervalSeconds: 1_800 },
];
/** Every query of every panel of the provisioned dashboard, its macros expanded as the plugin does (test/support/grafana-macros.ts), once per range. */
export function grafanaQueries() {
    const dashboard = JSON.parse(readFileSync(join(REPO, 'infra', 'grafana', 'dashboards', 'agentledger.json'), 'utf8'));
    const panels = (dashboard.panels ?? []).flatMap((p) => [p, ...(p.panels ?? [])]);
    const out = [];
    for (const range of GRAFANA_RANGES) {
        const ctx = { from: END_UNIX - range.seconds, to: END_UNIX, intervalSeconds: range.intervalSeconds };
        for (const p of panels)
            for (const t of p.targets ?? []) {
                if ((t.rawSql ?? '').trim() === '')
                    continue;
                out.push({ view: `${range.name} #${p.id} ${p.title ?? ''}${(p.targets?.length ?? 0) > 1 ? ` ${t.refId}` : ''}`, sql: expandMacros(t.rawSql, ctx) });
            }
    }
    return out;
}
/** Starts `agentledger serve --port 0` as the read-only user and returns its base URL, from the `serving url=…` line it logs. */
export async function startServe() {
    let resolveUrl = () => undefined;
    const got = new Promise((resolve) => (resolveUrl = resolve));
    const serve = cli(['serve', '--port', '0'], env({ AGENTLEDGER_SERVE_CLICKHOUSE_USER: READONLY_USER, AGENTLEDGER_SERVE_CLICKHOUSE_PASSWORD: READONLY_PASSWORD, AGENTLEDGER_LOG_LEVEL: 'info' }), (line) => {
        const m = /serving .*url=("?)(http:\/\/[^\s"]+)\1/.exec(line);
        if (m)
            resolveUrl(m[2]);
    });
    const url = await Promise.race([
        got,
        serve.done.then((r) => Promise.reject(new Error(`agentledger serve exited (${r.code}): ${r.err.slice(-1000)}`))),
        new Promise((_, reject) => setTimeout(() => reject(new Error('agentledger serve did not log its url within 30 s')), 30_000)),
    ]);
    return {
        url: url.replace(/\/$/, ''),
        stop: async () => {
            serve.child.kill('SIGTERM');
            const kill = setTimeout(() => serve.child.kill('SIGKILL'), 10_000);
            await serve.done;
            clearTimeout(kill);
        },
    };
}
//# sourceMappingURL=api.js.map