import { picoToUsdText } from '../money/picodollars.js';
import { parseSince } from '../read/since.js';
import { readSpend, SPEND_BY, SPEND_SOURCES, type SpendBy, type SpendRow, type SpendSource } from '../read/spend.js';
import { createClickHouse } from '../clickhouse/client.js';
import type { Command } from './command.js';
import { parseOptions, UsageError, wholeNumberOption } from './command.js';
import { printable } from './terminal.js';

export const spendCommand: Command = {
  name: 'spend',
  summary: 'what the loop runtime and craze spent, exactly, by model, day, loop name, root or source',
  help: `Usage: agentledger spend [--by model|day|name|root|source] [--since WHEN] [--until WHEN]
                        [--source runtime|craze|all] [--limit N] [--rollups] [--json]

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
  --limit N      the first N rows only: the N costliest (by day, the N newest
                 days); 0, the default: every row
  --rollups      read the hour rollups that \`agentledger worker\` keeps (the
                 committed hours, and the open hours live), as the page and
                 Grafana do, grouped by the --by key in ClickHouse: the
                 rollup rows and the open hours' envelopes, where the default
                 reads every stored envelope (about a minute at 10M calls on
                 a loaded 18.16). Hour granularity: every hour
                 that [--since, --until) overlaps counts whole, so --since is
                 rounded down to its hour and an hour that starts before
                 --until is in (--since 90m at 10:20 counts from 08:00). A
                 row stored after the last sweep with a time in a closed hour
                 shows after the next sweep; a loop no sweep has placed in
                 its tree yet has no name and is its own root until one does.
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
      limit: { type: 'string' },
      rollups: { type: 'boolean' },
      json: { type: 'boolean' },
    });
    const by = (values.by ?? 'model') as SpendBy;
    if (!SPEND_BY.includes(by)) throw new UsageError(`--by ${JSON.stringify(values.by)}: expected one of ${SPEND_BY.join(', ')}`);
    const source = (values.source ?? 'all') as SpendSource;
    if (!SPEND_SOURCES.includes(source)) throw new UsageError(`--source ${JSON.stringify(source)}: expected one of ${SPEND_SOURCES.join(', ')}`);
    const since = values.since === undefined ? undefined : parseSince(values.since);
    const until = values.until === undefined ? undefined : parseSince(values.until);
    const limit = values.limit === undefined ? undefined : wholeNumberOption('limit', values.limit, 0);
    const ch = createClickHouse(config.clickhouse);
    let rows: SpendRow[];
    try {
      rows = await readSpend(ch, { by, source, since, until, limit, rollups: values.rollups === true });
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
