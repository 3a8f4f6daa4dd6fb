import { picoToUsdText } from '../money/picodollars.js';
import { createClickHouse } from '../sink/clickhouse/client.js';
import { spendGroups, type SpendGroup } from '../sink/clickhouse/reads.js';
import type { Command } from './command.js';
import { parseOptions, UsageError } from './command.js';
import { readLoops } from './loops.js';
import { parseSince } from './sessions.js';
import { printable } from './terminal.js';

const BY = ['model', 'day', 'name', 'root', 'source'] as const;
type By = (typeof BY)[number];
const SOURCES = ['runtime', 'craze', 'all'] as const;

/** One row of `spend --json`: its key columns (by --by) and the sums. */
export interface SpendRow {
  source: string;
  provider?: string;
  model?: string;
  day?: string;
  name?: string;
  rootLoopId?: string;
  calls: number;
  /** Token sums as decimal strings, exact. */
  inputTokens: string;
  outputTokens: string;
  /** Picodollars as a decimal string, exact. */
  costPicoUsd: string;
  /** craze usage reports without a price: their cost is a floor. */
  unpricedCalls: number;
}

/** Where a spend group's owner sits: the loop's name and root (runtime), the session itself (craze). */
interface Owner {
  readonly name: string;
  readonly root: string;
}

/** Folds spend groups into rows keyed by `by`, costliest first (ties by key); by day, newest day first. */
export function foldSpend(groups: readonly SpendGroup[], by: By, owners: ReadonlyMap<string, Owner>): SpendRow[] {
  const rows = new Map<string, SpendRow & { cost: bigint; input: bigint; output: bigint }>();
  for (const g of groups) {
    const owner = g.source === 'runtime' ? owners.get(g.owner) : undefined;
    const keyed: Partial<SpendRow> =
      by === 'model'
        ? { provider: g.provider, model: g.model }
        : by === 'day'
          ? { day: g.day }
          : by === 'name'
            ? { name: owner?.name ?? '' }
            : by === 'root'
              ? // A craze session is its own root.
                { rootLoopId: g.source === 'runtime' ? (owner?.root ?? g.owner) : g.owner }
              : {};
    const key = JSON.stringify([g.source, keyed]);
    let row = rows.get(key);
    if (!row) {
      row = { source: g.source, ...keyed, calls: 0, inputTokens: '', outputTokens: '', costPicoUsd: '', unpricedCalls: 0, cost: 0n, input: 0n, output: 0n };
      rows.set(key, row);
    }
    row.calls += g.calls;
    row.unpricedCalls += g.unpricedCalls;
    row.cost += g.costPico;
    row.input += g.inputTokens;
    row.output += g.outputTokens;
  }
  type Entry = [string, { cost: bigint; day?: string }];
  const costliest = ([ka, a]: Entry, [kb, b]: Entry): number => (a.cost !== b.cost ? (a.cost > b.cost ? -1 : 1) : ka < kb ? -1 : ka > kb ? 1 : 0);
  // Days are a series: newest first, each day's sources costliest first.
  const newest = (a: Entry, b: Entry): number => {
    const [da, db] = [a[1].day ?? '', b[1].day ?? ''];
    return da === db ? costliest(a, b) : da > db ? -1 : 1;
  };
  return [...rows.entries()]
    .sort(by === 'day' ? newest : costliest)
    .map(([, { cost, input, output, ...row }]) => ({ ...row, costPicoUsd: cost.toString(), inputTokens: input.toString(), outputTokens: output.toString() }));
}

export const spendCommand: Command = {
  name: 'spend',
  summary: 'what the loop runtime and craze spent, exactly, by model, day, loop name, root or source',
  help: `Usage: agentledger spend [--by model|day|name|root|source] [--since WHEN] [--until WHEN]
                        [--source runtime|craze|all] [--json]

Sums counted spend in integer picodollars: the loop runtime's ModelCalled
usage (verified envelopes only, a fork's replayed events not counted again, a
parent's child_spend never added: see \`agentledger loops --help\`) and craze's
usage reports (as \`agentledger sessions\` counts them). Sums are exact at any
size (Decimal128 in ClickHouse, bigint here).

  --by model     per source, provider and model (the default)
  --by day       per source and UTC day of the envelope or event time, newest first
  --by name      per source and loop name (LoopStarted.name; craze: "")
  --by root      per source and root loop (a craze session is its own root)
  --by source    per source
  --since WHEN   spend at or after WHEN; --until WHEN: before WHEN (RFC 3339,
                 YYYY-MM-DD in UTC, or a span back from now: 90m, 24h, 7d)
  --source S     runtime, craze or all (the default)
  --json         an array of objects: source, the --by keys (provider and
                 model, day, name or rootLoopId), calls, inputTokens,
                 outputTokens and costPicoUsd (decimal strings, exact),
                 unpricedCalls`,
  async run(args, { config, out }) {
    const { values } = parseOptions(args, {
      by: { type: 'string' },
      since: { type: 'string' },
      until: { type: 'string' },
      source: { type: 'string' },
      json: { type: 'boolean' },
    });
    const by = (values.by ?? 'model') as By;
    if (!BY.includes(by)) throw new UsageError(`--by ${JSON.stringify(values.by)}: expected one of ${BY.join(', ')}`);
    const source = values.source ?? 'all';
    if (!(SOURCES as readonly string[]).includes(source)) throw new UsageError(`--source ${JSON.stringify(source)}: expected one of ${SOURCES.join(', ')}`);
    const sources: readonly ('runtime' | 'craze')[] = source === 'all' ? ['runtime', 'craze'] : [source as 'runtime' | 'craze'];
    const since = values.since === undefined ? undefined : parseSince(values.since);
    const until = values.until === undefined ? undefined : parseSince(values.until);
    const ch = createClickHouse(config.clickhouse);
    let rows: SpendRow[];
    try {
      const groups = await spendGroups(ch, sources, { since, until });
      const owners = new Map<string, Owner>();
      if ((by === 'name' || by === 'root') && sources.includes('runtime')) {
        for (const l of await readLoops(ch)) owners.set(l.loopId, { name: l.name, root: l.rootLoopId });
      }
      rows = foldSpend(groups, by, owners);
    } finally {
      await ch.close();
    }
    if (values.json) {
      out(JSON.stringify(rows));
      return 0;
    }
    const keyOf = (r: SpendRow): string =>
      by === 'model' ? `${r.provider ?? ''}/${r.model ?? ''}` : by === 'day' ? (r.day ?? '') : by === 'name' ? (r.name ?? '') : by === 'root' ? (r.rootLoopId ?? '') : '';
    out(`source   ${by.padEnd(40)}    calls        input       output                  USD`);
    for (const r of rows) {
      out(
        `${r.source.padEnd(8)} ${printable(keyOf(r)).padEnd(40)} ${String(r.calls).padStart(8)} ${r.inputTokens.padStart(12)} ${r.outputTokens.padStart(12)} ${picoToUsdText(BigInt(r.costPicoUsd)).padStart(20)}`,
      );
    }
    if (rows.length === 0) out('(no spend)');
    return 0;
  },
};
