/**
 * The stack's Prometheus (infra/stack.sh's `prometheus` service,
 * infra/prometheus/service.sh) as tests use it: started if it is not up,
 * its HTTP API, and the file_sd target files a test writes so that
 * Prometheus scrapes the test's own processes.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { REPO_ROOT } from './services.js';

export const PROMETHEUS = 'http://127.0.0.1:9090';

/** The jobs the stack's Prometheus scrapes from file_sd files, named as the alerting rules expect. */
export type ScrapeJob = 'ingest' | 'worker' | 'serve';

async function ready(): Promise<boolean> {
  return fetch(`${PROMETHEUS}/-/ready`).then(
    (r) => r.ok,
    () => false,
  );
}

/** Starts the stack's Prometheus unless it answers (as services.ts starts the rest of the stack). */
export async function ensurePrometheus(): Promise<void> {
  if (await ready()) return;
  const run = spawnSync('bash', [`${REPO_ROOT}infra/stack.sh`, 'start', 'prometheus'], { stdio: ['ignore', 'inherit', 'inherit'] });
  assert.equal(run.status, 0, 'infra/stack.sh start prometheus failed');
}

/** One answer of Prometheus's HTTP API: its `data`, or the test fails with Prometheus's error. */
export async function promApi<T>(path: string, params: Record<string, string> = {}): Promise<T> {
  const url = new URL(path, PROMETHEUS);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  const res = await fetch(url);
  const body = (await res.json()) as { status?: string; data?: T; errorType?: string; error?: string };
  assert.equal(body.status, 'success', `${url.pathname}${url.search}: ${body.errorType ?? ''} ${body.error ?? ''}`);
  return body.data as T;
}

export interface Sample {
  readonly metric: Readonly<Record<string, string>>;
  readonly value: readonly [number, string];
}

/** An instant query's vector (its error fails the test). */
export async function instantQuery(expr: string): Promise<Sample[]> {
  const data = await promApi<{ resultType: string; result: Sample[] }>('/api/v1/query', { query: expr });
  assert.equal(data.resultType, 'vector', `${expr}: an instant vector`);
  return data.result;
}

/**
 * Where the running Prometheus reads a job's file_sd files, from its own
 * loaded configuration (a Prometheus started from another checkout of the
 * repository has its own folder).
 */
async function targetsFile(job: ScrapeJob, id: string): Promise<string> {
  const { yaml } = await promApi<{ yaml: string }>('/api/v1/status/config');
  const glob = new RegExp(`job_name: agentledger-${job}\\n[\\s\\S]*?files:\\n\\s*- (\\S+/${job}-\\*\\.json)`).exec(yaml)?.[1];
  assert.ok(glob, `the running Prometheus has the stack's job agentledger-${job} with file_sd files (infra/prometheus/service.sh); restart it: bash infra/stack.sh stop prometheus && bash infra/stack.sh start prometheus`);
  return `${dirname(glob)}/${job}-${id}.json`;
}

/**
 * Makes Prometheus scrape `address` as job agentledger-<job>, its series
 * labelled `test=<id>`; the returned function removes the target again.
 * Written through a rename, so Prometheus never reads half a file.
 */
export async function scrapeTarget(job: ScrapeJob, id: string, address: string): Promise<() => void> {
  const file = await targetsFile(job, id);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(`${file}.tmp`, JSON.stringify([{ targets: [address], labels: { test: id } }]) + '\n');
  renameSync(`${file}.tmp`, file);
  return () => rmSync(file, { force: true });
}

/**
 * Grafana's variables in a panel's PromQL as Grafana expands them for the
 * data source's scrape interval (its `timeInterval`) and the dashboard's
 * range: `$__interval` the step, `$__rate_interval` max(step + scrape
 * interval, 4 × scrape interval), `$__range` the whole range. Any other `$`
 * is refused: a variable the checks could not evaluate.
 */
export function expandPromVariables(expr: string, v: { intervalSeconds: number; scrapeSeconds: number; rangeSeconds: number }): string {
  const rate = Math.max(v.intervalSeconds + v.scrapeSeconds, 4 * v.scrapeSeconds);
  const out = expr
    .replaceAll('$__rate_interval', `${rate}s`)
    .replaceAll('$__interval', `${v.intervalSeconds}s`)
    .replaceAll('$__range', `${v.rangeSeconds}s`);
  if (out.includes('$')) throw new Error(`a Grafana variable the checks do not know in: ${expr}`);
  return out;
}
