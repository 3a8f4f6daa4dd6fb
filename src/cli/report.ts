import { createClickHouse } from '../clickhouse/client.js';
import { latestViolations, verdictCounts } from '../read/chain-reads.js';
import type { Command } from './command.js';
import { parseOptions, wholeNumberOption } from './command.js';
import { printable } from './terminal.js';

export const reportCommand: Command = {
  name: 'report',
  summary: 'summarise stored envelopes by verdict and list the latest chain violations',
  help: `Usage: agentledger report [--limit N] [--json]

Reads ClickHouse: envelopes and loops per verdict, then the latest N chain
violations (default 20) with their detail. With --json one object
{"verdicts": [{"verdict", "envelopes", "loops"}], "violations": [{"loopId", "seq", "verdict", "detail", "time"}]}.`,
  async run(args, { config, out }) {
    const { values } = parseOptions(args, { limit: { type: 'string' }, json: { type: 'boolean' } });
    const limit = values.limit === undefined ? 20 : wholeNumberOption('limit', values.limit, 0);
    const ch = createClickHouse(config.clickhouse);
    try {
      const verdicts = await verdictCounts(ch);
      const violations = await latestViolations(ch, limit);
      if (values.json) {
        out(
          JSON.stringify({
            verdicts: verdicts.map((v) => ({ verdict: v.verdict, envelopes: Number(v.envelopes), loops: Number(v.loops) })),
            violations: violations.map((v) => ({ loopId: v.loopId, seq: Number(v.seq), verdict: v.verdict, detail: v.detail, time: v.time })),
          }),
        );
        return 0;
      }
      out('verdict          envelopes      loops');
      for (const v of verdicts) out(`${printable(v.verdict).padEnd(15)} ${String(v.envelopes).padStart(10)} ${String(v.loops).padStart(10)}`);
      if (violations.length > 0) out(`\nlatest ${violations.length} chain violation(s):`);
      for (const v of violations) out(`  ${printable(v.verdict).padEnd(15)} ${printable(v.loopId)} seq ${v.seq}: ${printable(v.detail)}`);
      return 0;
    } finally {
      await ch.close();
    }
  },
};
