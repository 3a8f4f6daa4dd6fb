import { picoToUsdText } from '../money/picodollars.js';
import { listLoops, type ListedLoop } from '../read/loops.js';
import { createClickHouse } from '../clickhouse/client.js';
import type { Command } from './command.js';
import { parseOptions, wholeNumberOption } from './command.js';
import { printable } from './terminal.js';

export const loopsCommand: Command = {
  name: 'loops',
  summary: 'list loop-runtime loops with their tree and exact spend',
  help: `Usage: agentledger loops [--json] [--id-prefix P] [--root ID] [--limit N]

Lists the loops of the loop runtime stored in ClickHouse: parent, root and
depth (from the loop's own LoopStarted or its parent's SubAgentSpawned,
whichever is stored; a loop ingested before its parent gets its true root once
the parent is stored), name, outcome (LoopFinished), and what it spent.

Spend counts verified envelopes only (ok, gap, time_regression: their own hash
verified); a fork's replayed events (seq <= ForkedFrom.at_seq) are its
source's money and not counted again; a parent's SubAgentCompleted.child_spend
is never added (the child's own calls are). The model cost of mismatch, fork
(second version) and regression envelopes is reported apart, as
unverifiedModelCostPicoUsd. subtreeModelCostPicoUsd is the loop's own model
cost plus every descendant's, each loop once.

  --id-prefix P  only loops whose id starts with P
  --root ID      only the tree of root loop ID (indented, parents first)
  --limit N      at most N loops
  --json         an array of objects with loopId, parentLoopId ("" for a root),
                 rootLoopId, depth, name, outcome, error, modelCalls, inputTokens,
                 outputTokens, modelCostPicoUsd, budgetPicoUsd,
                 unverifiedModelCostPicoUsd, subtreeModelCostPicoUsd (money as
                 decimal strings of integer picodollars), iterations,
                 subagentsSpawned, subagentsCompleted, subagentsFailed,
                 forkedFrom, forkedAtSeq, firstTime, lastTime`,
  async run(args, { config, out }) {
    const { values } = parseOptions(args, {
      json: { type: 'boolean' },
      'id-prefix': { type: 'string' },
      root: { type: 'string' },
      limit: { type: 'string' },
    });
    const limit = values.limit === undefined ? undefined : wholeNumberOption('limit', values.limit, 0);
    const ch = createClickHouse(config.clickhouse);
    let rows: ListedLoop[];
    try {
      const q = { idPrefix: values['id-prefix'], root: values.root, limit };
      rows = await listLoops(ch, q, { lateMs: config.rollups.lateMs, maxLoops: config.rollups.scanLoops });
    } finally {
      await ch.close();
    }
    if (values.json) {
      out(JSON.stringify(rows.map((r) => r.loop)));
      return 0;
    }
    out('loop                                       depth  outcome         calls       model USD    subtree USD     budget USD  unverified USD');
    for (const { loop, level } of rows) {
      const id = `${'  '.repeat(level)}${printable(loop.loopId)}`;
      out(
        `${id.padEnd(42)} ${String(loop.depth).padStart(5)}  ${printable(loop.outcome || '-').padEnd(14)} ${String(loop.modelCalls).padStart(6)} ${usd(loop.modelCostPicoUsd)} ${usd(loop.subtreeModelCostPicoUsd)} ${usd(loop.budgetPicoUsd)} ${usd(loop.unverifiedModelCostPicoUsd)}`,
      );
    }
    if (rows.length === 0) out('(no loops)');
    return 0;
  },
};

/** Picodollars as USD with 6 decimals (truncated toward zero), right-aligned; the exact figure is in --json. */
function usd(pico: string): string {
  const text = picoToUsdText(BigInt(pico));
  return text.slice(0, text.length - 6).padStart(14);
}
