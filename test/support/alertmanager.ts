/**
 * The local stack's Alertmanager (infra/stack.sh, 127.0.0.1:9193) for the
 * tests: started by the project's script when it is not up, restarted by it,
 * asked through `amtool` (as a person would) and through its v2 API (byte for
 * byte, for hostile label values).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { REPO_ROOT } from './services.js';

export const ALERTMANAGER_URL = 'http://127.0.0.1:9193';

/** One alert as Alertmanager lists it (GET /api/v2/alerts, amtool -o json). */
export interface ListedAlert {
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
  readonly startsAt: string;
  readonly endsAt: string;
  readonly generatorURL?: string;
  readonly status: { readonly state: string; readonly inhibitedBy: readonly string[] };
}

function stack(...args: string[]): void {
  const r = spawnSync('bash', [`${REPO_ROOT}infra/stack.sh`, ...args], { encoding: 'utf8' });
  assert.equal(r.status, 0, `infra/stack.sh ${args.join(' ')}: ${r.stdout}${r.stderr}`);
}

/** Starts the stack's Alertmanager unless it answers already. */
export async function alertmanagerUp(): Promise<void> {
  const ready = await fetch(`${ALERTMANAGER_URL}/-/ready`).then((r) => r.ok, () => false);
  if (!ready) stack('start', 'alertmanager');
}

/** Restarts it (it keeps no alerts: they are back once their senders re-send them). */
export function restartAlertmanager(): void {
  stack('restart', 'alertmanager');
}

/** `amtool alert query -o json MATCHERS…`: the active alerts matching. */
export function amtoolQuery(...matchers: string[]): ListedAlert[] {
  const r = spawnSync('amtool', [`--alertmanager.url=${ALERTMANAGER_URL}`, 'alert', 'query', '-o', 'json', ...matchers], { encoding: 'utf8' });
  if (r.error) assert.fail(`amtool could not run (${r.error.message}): bash infra/stack.sh install puts it in place (Debian's prometheus-alertmanager)`);
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as ListedAlert[];
}

/** Every alert it holds, active, inhibited or silenced (the API; undefined while it does not answer). */
export async function listedAlerts(): Promise<ListedAlert[] | undefined> {
  const res = await fetch(`${ALERTMANAGER_URL}/api/v2/alerts`).catch(() => undefined);
  return res?.ok === true ? ((await res.json()) as ListedAlert[]) : undefined;
}

/** `amtool check-config FILE`: its exit status and output. */
export function amtoolCheckConfig(file: string): { status: number | null; out: string } {
  const r = spawnSync('amtool', ['check-config', file], { encoding: 'utf8' });
  if (r.error) assert.fail(`amtool could not run (${r.error.message})`);
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}
