/**
 * What each test file cost the last time it ran: its wall seconds and the
 * machine's CPU busy share meanwhile (from /proc/stat, so the services'
 * work on its behalf counts too). run-suite.ts prints them under its
 * summary, slowest first, writes them to `.state/test-times.json`, and the
 * next run schedules by them (suite-lanes.ts): longest first, and two
 * files side by side only where both mostly wait.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './services.js';

/** Where a run writes the times it measured, for the next run to schedule by. */
export const TIMES_FILE = join(REPO_ROOT, '.state', 'test-times.json');
/**
 * The times measured on the 2-core machine with every file run alone: what
 * a fresh clone (CI) schedules by, since it has no `.state` yet. Refreshed
 * by copying a serial run's `.state/test-times.json` here
 * (`AGENTLEDGER_TEST_LANES=serial infra/test.sh`, docs/tests.md).
 */
export const MEASURED_FILE = join(REPO_ROOT, 'test', 'suite-times.json');

/** The machine's CPU counters: busy and total jiffies over every core. */
export interface CpuSample {
  busy: number;
  total: number;
}

/** One file's measurement. `alone`: no other file ran beside it, so `cpu` is its own. */
export interface FileTime {
  seconds: number;
  cpu: number;
  alone: boolean;
}

export type Times = Record<string, FileTime>;

/** The first line of /proc/stat (`cpu  user nice system idle iowait irq softirq steal …`) as busy and total jiffies. */
export function parseCpuLine(stat: string): CpuSample {
  const line = stat.split('\n', 1)[0] ?? '';
  const fields = line.trim().split(/\s+/).slice(1, 9).map(Number);
  if (fields.length < 5 || fields.some((n) => !Number.isFinite(n))) throw new Error(`/proc/stat: cannot read its cpu line: ${line}`);
  const total = fields.reduce((a, b) => a + b, 0);
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
  return { busy: total - idle, total };
}

/** The machine's CPU counters now (zero where there is no /proc/stat: the share then reads 0). */
export function cpuSample(): CpuSample {
  try {
    return parseCpuLine(readFileSync('/proc/stat', 'utf8'));
  } catch {
    return { busy: 0, total: 0 };
  }
}

/** The busy share of every core between two samples, 0 to 1. */
export function busyShare(from: CpuSample, to: CpuSample): number {
  const total = to.total - from.total;
  return total <= 0 ? 0 : Math.min(1, Math.max(0, (to.busy - from.busy) / total));
}

/** Times from a file written by writeTimes (an absent or unreadable file is no times). */
export function readTimes(path: string): Times {
  if (!existsSync(path)) return {};
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as { files?: Times };
    return parsed.files ?? {};
  } catch {
    return {};
  }
}

/**
 * The times to schedule by: the committed measurement, then the last run's on
 * top. A last-run CPU share measured beside another file is that pair's, not
 * the file's: the earlier figure is kept for it, the seconds are taken.
 */
export function schedulingTimes(measured: Times, last: Times): Times {
  const times: Times = { ...measured };
  for (const [file, t] of Object.entries(last)) {
    const before = times[file];
    times[file] = t.alone || before === undefined ? t : { ...before, seconds: t.seconds };
  }
  return times;
}

/** The JSON a run writes: every file's figure, and when. */
export function timesJson(files: Times, at: Date): string {
  const sorted = Object.fromEntries(Object.entries(files).sort(([a], [b]) => a.localeCompare(b)));
  return `${JSON.stringify({ measured: at.toISOString(), files: sorted }, null, 2)}\n`;
}

/** The summary's table: every file with its seconds and CPU share, slowest first. */
export function timesTable(files: Times): string {
  const rows = Object.entries(files).sort(([a, x], [b, y]) => y.seconds - x.seconds || a.localeCompare(b));
  const width = Math.max(4, ...rows.map(([f]) => f.length));
  const lines = rows.map(([f, t]) => `  ${f.padEnd(width)}  ${t.seconds.toFixed(1).padStart(7)} s  cpu ${String(Math.round(t.cpu * 100)).padStart(3)} %${t.alone ? '' : '  (beside another file)'}`);
  return [`  ${'file'.padEnd(width)}  ${'seconds'.padStart(9)}  cpu busy`, ...lines].join('\n');
}
