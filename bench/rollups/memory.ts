/**
 * Step M (issue 40 item 7): the peak memory of every Grafana panel's query
 * (each range of GRAFANA_RANGES) and of every page endpoint (the reads
 * test/support/dashboard-reads.ts lists, which test/integration/dashboard-memory.test.ts
 * runs under a lowered limit), each under the limit the server gives the
 * dashboard's and serve's users, read back from system.query_log
 * (`memory_usage` of the read's largest query; log_queries=1 on its queries).
 *
 * The reads run as the bench's user, not agentledger_dashboard: that user may
 * open only the deployment's database, and its readonly=1 refuses
 * log_queries. Memory does not depend on who reads; the limit is the one
 * that user's profile carries (max_memory_usage of the server's default
 * profile, which 18.16 applies under every profile that does not set it).
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type { ClickHouseSettings } from '../../src/clickhouse/client.js';
import { pageReads, panelReads, readCost, readerClient, type DashboardRead, type ReadCost } from '../../test/support/dashboard-reads.js';
import { loopId, MODELS } from './data.js';
import { GRAFANA_RANGES } from './api.js';
import { END_UNIX } from './window.js';
import { DB } from './options.js';

export interface MemoryRead {
  readonly label: string;
  readonly cost?: ReadCost;
  readonly error?: string;
}

/** The reads of step M: every panel per range, then every page endpoint (clock at the data's end, the tree of loopId(1)). */
export function memoryReads(): DashboardRead[] {
  const panels = GRAFANA_RANGES.flatMap((range) =>
    panelReads({ from: END_UNIX - range.seconds, to: END_UNIX, intervalSeconds: range.intervalSeconds }).map((r) => ({ ...r, label: `${range.name} ${r.label}` })),
  );
  return [...panels, ...pageReads(END_UNIX * 1000, loopId(1), MODELS[0].model)];
}

/** The limit the server gives a user whose profile sets none: what `admin` reads as its own max_memory_usage. */
export async function memoryLimit(admin: ClickHouseClient): Promise<number> {
  const rs = await admin.query({ query: "SELECT value FROM system.settings WHERE name = 'max_memory_usage'", format: 'JSONEachRow' });
  const [row] = await rs.json<{ value: string }>();
  return Number(row?.value ?? 0);
}

/** Each read once, on a client of its own (its application name finds its queries in the log), under `limitBytes`. */
export async function measureMemory(settings: ClickHouseSettings, admin: ClickHouseClient, tag: string, limitBytes: number, say: (line: string) => void): Promise<MemoryRead[]> {
  const out: MemoryRead[] = [];
  for (const [i, read] of memoryReads().entries()) {
    // The run's database and a closing mark keep read 1 from matching read 10, or an earlier run's.
    const application = `agentledger-${DB}-${tag}-${i}-end`;
    const ch = readerClient(settings, application, { max_memory_usage: String(limitBytes), log_queries: '1' });
    try {
      await read.run(ch);
      const cost = await readCost(admin, application);
      out.push({ label: read.label, cost });
      say(`memory ${read.label}: ${mib(cost.peakBytes)} MiB peak, ${cost.ms} ms, ${cost.queries} queries`);
    } catch (err) {
      const error = err instanceof Error ? err.message.split('\n')[0]!.slice(0, 200) : String(err);
      out.push({ label: read.label, error });
      say(`memory ${read.label}: FAILED ${error}`);
    } finally {
      await ch.close();
    }
  }
  return out;
}

export const mib = (bytes: number): string => (bytes / 1_048_576).toFixed(1);

/** The table of step M: one line per read, its peak against the limit. */
export function memoryTable(stage: string, reads: readonly MemoryRead[], limitBytes: number): string[] {
  const w = Math.max(...reads.map((r) => r.label.length), 4);
  const lines = [`Peak memory, ${stage}: every panel and page endpoint once, limit ${mib(limitBytes)} MiB (max_memory_usage), system.query_log memory_usage of the read's largest query`];
  lines.push(`${'read'.padEnd(w)}  ${'MiB'.padStart(8)} ${'ms'.padStart(8)} ${'queries'.padStart(7)}  verdict`);
  for (const r of reads)
    lines.push(
      r.cost
        ? `${r.label.padEnd(w)}  ${mib(r.cost.peakBytes).padStart(8)} ${String(r.cost.ms).padStart(8)} ${String(r.cost.queries).padStart(7)}  ${r.cost.queries === 0 ? 'not logged' : r.cost.peakBytes < limitBytes ? 'within' : 'OVER'}`
        : `${r.label.padEnd(w)}  ${'-'.padStart(8)} ${'-'.padStart(8)} ${'-'.padStart(7)}  FAILED ${r.error}`,
    );
  const peak = Math.max(0, ...reads.map((r) => r.cost?.peakBytes ?? 0));
  const failed = reads.filter((r) => r.cost === undefined).length;
  lines.push(`${stage}: ${reads.length - failed} of ${reads.length} reads answered; highest peak ${mib(peak)} MiB of ${mib(limitBytes)}`);
  return lines;
}
