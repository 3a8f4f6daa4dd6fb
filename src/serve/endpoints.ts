/**
 * The page's endpoints beyond the commands' JSON (docs/dashboards.md "The page"): each a
 * function of the query string, reading through the typed read layer
 * (page-reads.ts) as the read-only user. Parameters are
 * checked first (params.ts): a bad one is a 400 with one line.
 *
 * Money is a decimal string of integer picodollars everywhere (`…PicoUsd`),
 * exact: bigint sums in Node, Decimal128 in ClickHouse.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import {
  chainTotals,
  loopReconciliation,
  pageCounts,
  rootReconciliation,
  spendSeries,
  spendWindows,
  topNames,
  topRoots,
  treeFacts,
  treeLoops,
  violations,
  type SeriesBy,
} from './page-reads.js';
import { foldSeries, foldTree } from './fold.js';
import { clampSeconds, DAY_S, FILTER_KEYS, filters, HOUR_S, seriesQuery, takeParams, utcMidnight, when, wholeNumber } from './params.js';
import { RequestError, type EndpointHandler } from './server.js';

/** A loop is active when it has an envelope within this long and no LoopFinished. */
const ACTIVE_WINDOW_S = 3600;

const isoOf = (seconds: number): string => new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');

/** A stored fork's evidence as an object when it is JSON, else the text itself. */
function evidenceOf(text: string): unknown {
  if (text === '') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

export function pageEndpoints(ch: ClickHouseClient, clock: () => number = Date.now): Record<string, EndpointHandler> {
  /** The parameters of a top list (roots, names): whole hours from since (30d) to until (an hour ahead), the filters, limit 1-1000 (20). */
  const topListParams = (query: URLSearchParams) => {
    const params = takeParams(query, ['since', 'until', 'limit', ...FILTER_KEYS]);
    const nowMs = clock();
    const since = clampSeconds(when(params, 'since', '30d', nowMs));
    const until = clampSeconds(when(params, 'until', new Date(nowMs + 3_600_000).toISOString(), nowMs));
    return { since: since - (since % HOUR_S), until, f: filters(params), limit: wholeNumber(params, 'limit', 20, 1, 1000) };
  };
  return {
    /** Headline cards: spend today / 7 d / 30 d (whole UTC days), verified vs unverified, calls, loops, alerts, violations. */
    async overview(query) {
      const f = filters(takeParams(query, [...FILTER_KEYS]));
      const nowMs = clock();
      const now = Math.floor(nowMs / 1000);
      const today = utcMidnight(now);
      const starts = { today, week: today - 6 * DAY_S, month: today - 29 * DAY_S };
      const [sums, chain, counts] = await Promise.all([spendWindows(ch, starts, f), chainTotals(ch, starts.month, f), pageCounts(ch, now - ACTIVE_WINDOW_S)]);
      // Unverified cost is the runtime's: none under a craze-only filter.
      const unverified = f.source === 'craze' ? { calls: 0n, costPico: 0n } : { calls: chain.unverifiedCalls, costPico: chain.unverifiedCostPico };
      return {
        now: new Date(nowMs).toISOString(),
        filters: f,
        today: { since: isoOf(starts.today), costPicoUsd: sums.todayCostPico.toString(), calls: Number(sums.todayCalls) },
        week: { since: isoOf(starts.week), costPicoUsd: sums.weekCostPico.toString(), calls: Number(sums.weekCalls) },
        month: { since: isoOf(starts.month), costPicoUsd: sums.monthCostPico.toString(), calls: Number(sums.monthCalls) },
        modelCalls: Number(sums.monthCalls),
        verified: { since: isoOf(starts.month), costPicoUsd: sums.runtimeCostPico.toString(), calls: Number(sums.runtimeCalls) },
        unverified: { since: isoOf(starts.month), costPicoUsd: unverified.costPico.toString(), calls: Number(unverified.calls) },
        activeLoops: counts.activeLoops,
        stuckLoops: counts.stuckLoops,
        firingAlerts: counts.firingAlerts,
        chainViolations: chain.violations,
      };
    },

    /** Spend over time: whole buckets, one line per key, per-bucket totals. */
    async series(query) {
      const nowMs = clock();
      const q = seriesQuery(query, nowMs);
      const step = q.step === 'hour' ? HOUR_S : DAY_S;
      const by: SeriesBy = q.by === 'name' ? 'loop_name' : q.by;
      const cells = await spendSeries(ch, { day: q.step === 'day', by, since: q.since, until: q.until, source: q.source, model: q.model, name: q.name });
      return {
        step: q.step,
        by: q.by,
        since: isoOf(q.since),
        until: isoOf(q.until),
        filters: { source: q.source, model: q.model, name: q.name },
        ...foldSeries(cells, q.since, q.until, step),
      };
    },

    /** Top roots by counted spend in [since, until) (committed rollup hours), with the root's name; model and name filter the calls counted. */
    async roots(query) {
      const { since, until, f, limit } = topListParams(query);
      const rows = await topRoots(ch, { since, until, limit, ...f });
      return rows.map((r) => ({
        source: r.source,
        rootLoopId: r.rootLoopId,
        name: r.name,
        calls: Number(r.calls),
        costPicoUsd: r.costPico.toString(),
        firstHour: r.firstHour,
        lastHour: r.lastHour,
      }));
    },

    /** Top loop names of the runtime by counted spend in [since, until). */
    async names(query) {
      const { since, until, f, limit } = topListParams(query);
      if (f.source === 'craze') return [];
      const rows = await topNames(ch, { since, until, model: f.model, limit });
      return rows.filter((r) => f.name === '' || r.name === f.name).map((r) => ({ name: r.name, calls: Number(r.calls), costPicoUsd: r.costPico.toString() }));
    },

    /** The loop tree of one root; 404 when no loop is placed under it. */
    async tree(query) {
      const params = takeParams(query, ['root']);
      const root = params.get('root') ?? '';
      if (root === '') throw new RequestError(400, 'root=ID is required');
      const [loops, facts] = await Promise.all([treeLoops(ch, root), treeFacts(ch, root)]);
      if (loops.length === 0) throw new RequestError(404, `no loop tree with root ${JSON.stringify(root.slice(0, 200))}`);
      const tree = foldTree(root, loops, facts);
      return {
        root,
        loops: tree,
        subtreeModelCostPicoUsd: tree.find((l) => l.loopId === root)?.subtreeModelCostPicoUsd ?? loops.reduce((a, l) => a + l.ownCostPico, 0n).toString(),
      };
    },

    /** Chain violations ingested since `since` (30d), newest first, with their evidence. */
    async violations(query) {
      const params = takeParams(query, ['since', 'limit']);
      const since = clampSeconds(when(params, 'since', '30d', clock()));
      const limit = wholeNumber(params, 'limit', 50, 1, 1000);
      return (await violations(ch, since, limit)).map((v) => ({ ...v, evidence: evidenceOf(v.evidence) }));
    },

    /** Loops and roots whose ledgers disagree, the differences exact. */
    async reconciliation(query) {
      const params = takeParams(query, ['limit']);
      const limit = wholeNumber(params, 'limit', 50, 1, 1000);
      const [loops, roots] = await Promise.all([loopReconciliation(ch, limit), rootReconciliation(ch, limit)]);
      return {
        loops: loops.map((l) => ({
          loopId: l.loopId,
          rootLoopId: l.rootLoopId,
          modelDisagrees: l.modelDisagrees,
          totalSpendDisagrees: l.totalSpendDisagrees,
          childSpendDisagrees: l.childSpendDisagrees,
          modelCostPicoUsd: l.modelCostPico.toString(),
          modelBudgetPicoUsd: l.modelBudgetPico.toString(),
          budgetPicoUsd: l.budgetPico.toString(),
          totalSpendPicoUsd: l.hasTotalSpend ? l.totalSpendPico.toString() : null,
          childSpendPicoUsd: l.hasChildSpend ? l.childSpendPico.toString() : null,
          modelMinusModelBudgetPicoUsd: l.modelMinusModelBudgetPico.toString(),
          budgetMinusTotalSpendPicoUsd: l.hasTotalSpend ? l.budgetMinusTotalSpendPico.toString() : null,
          budgetMinusChildSpendPicoUsd: l.hasChildSpend ? l.budgetMinusChildSpendPico.toString() : null,
        })),
        roots: roots.map((r) => ({
          rootLoopId: r.rootLoopId,
          loops: r.loops,
          loopsDisagreeing: r.loopsDisagreeing,
          treeModelCostPicoUsd: r.treeModelCostPico.toString(),
          treeModelBudgetPicoUsd: r.treeModelBudgetPico.toString(),
          treeBudgetPicoUsd: r.treeBudgetPico.toString(),
        })),
      };
    },
  };
}
