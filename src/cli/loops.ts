import { picoToUsdText } from '../money/picodollars.js';
import { readLoops, type LoopSummary } from '../read/loops.js';
import { createClickHouse } from '../sink/clickhouse/client.js';
import type { Command } from './command.js';
import { parseOptions, wholeNumberOption } from './command.js';
import { printable } from './terminal.js';

/** The loops of one tree, parents before children (siblings by id), for the indented view. */
function treeOrder(loops: readonly LoopSummary[], root: string): { loop: LoopSummary; level: number }[] {
  const children = new Map<string, LoopSummary[]>();
  for (const l of loops) {
    if (l.loopId === root) continue;
    const list = children.get(l.parentLoopId);
    if (list) list.push(l);
    else children.set(l.parentLoopId, [l]);
  }
  const out: { loop: LoopSummary; level: number }[] = [];
  const seen = new Set<string>();
  const top = loops.find((l) => l.loopId === root);
  const stack: { loop: LoopSummary; level: number }[] = top ? [{ loop: top, level: 0 }] : (children.get(root) ?? []).map((loop) => ({ loop, level: 0 })).reverse();
  while (stack.length > 0) {
    const next = stack.pop()!;
    if (seen.has(next.loop.loopId)) continue;
    seen.add(next.loop.loopId);
    out.push(next);
    const kids = [...(children.get(next.loop.loopId) ?? [])].sort((a, b) => (a.loopId < b.loopId ? -1 : 1));
    for (let i = kids.length - 1; i >= 0; i--) stack.push({ loop: kids[i]!, level: next.level + 1 });
  }
  return out;
}

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
    let loops: LoopSummary[];
    try {
      loops = await readLoops(ch);
    } finally {
      await ch.close();
    }
    const prefix = values['id-prefix'];
    if (prefix !== undefined) loops = loops.filter((l) => l.loopId.startsWith(prefix));
    const root = values.root;
    let rows = root === undefined ? loops.map((loop) => ({ loop, level: 0 })) : treeOrder(loops.filter((l) => l.rootLoopId === root), root);
    if (limit !== undefined) rows = rows.slice(0, limit);
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
