/**
 * The demo (infra/demo.sh) says every alert rule has something to say about
 * its traffic. For `convergence` that depends on the thresholds it gives the
 * worker: the generator's loops warn once or twice, and most of those that
 * warn twice finish Completed (which the rule takes as converged). Here the
 * demo's own settings, read from demo.sh, are applied by the rule itself to
 * the demo's traffic for twelve seeds (the demo seeds with the clock): each
 * must raise at least one convergence alert.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { LoopWarningsRow } from '../../../src/alerts/rule-rows.js';
import { convergence, DEFAULT_ALERT_RULE_CONFIG } from '../../../src/alerts/rules.js';
import { decodeEnvelope } from '../../../src/decode/envelope.js';
import { defaultViolationPlan, generateSpendTraffic, generateTraffic } from '../../../src/demo/traffic/index.js';

const demo = readFileSync(new URL('../../../../infra/demo.sh', import.meta.url), 'utf8');

/** The value demo.sh gives a setting on the worker's command line, or the default. */
function demoSetting(name: string, fallback: number): number {
  const m = new RegExp(`\\b${name}=(\\d+)\\b`).exec(demo);
  return m ? Number(m[1]) : fallback;
}

/** The produce-demo options demo.sh runs with (--loops, --envelopes, --spend-roots). */
function demoOption(name: string): number {
  const m = new RegExp(`produce-demo[^\\n]*--${name} (\\d+)`).exec(demo);
  assert.ok(m, `demo.sh runs produce-demo with --${name}`);
  return Number(m[1]);
}

test("the demo's worker thresholds raise a convergence alert for the demo's traffic, whatever the seed", () => {
  const config = {
    windowMs: DEFAULT_ALERT_RULE_CONFIG.windowMs,
    convergenceMinWarnings: demoSetting('AGENTLEDGER_ALERT_CONVERGENCE_MIN_WARNINGS', DEFAULT_ALERT_RULE_CONFIG.convergenceMinWarnings),
    convergenceCount: demoSetting('AGENTLEDGER_ALERT_CONVERGENCE_COUNT', DEFAULT_ALERT_RULE_CONFIG.convergenceCount),
  };
  const now = Date.now();
  // As the demo: started half an hour ago.
  const startTime = new Date(now - 30 * 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
  const loops = demoOption('loops');
  const none: number[] = [];
  for (let seed = 1; seed <= 12; seed++) {
    const traffic = generateTraffic({ startTime, loops, envelopesPerLoop: demoOption('envelopes'), seed, payloadBytes: 16, violations: defaultViolationPlan(loops) });
    const spend = generateSpendTraffic({ seed, roots: demoOption('spend-roots'), startTime });
    const rows = new Map<string, LoopWarningsRow & { warnings: LoopWarningsRow['warnings'][number][]; finishedOutcome: string | undefined }>();
    for (const r of [...traffic.records, ...spend.records]) {
      const d = decodeEnvelope(r.value);
      if (!d.ok) continue;
      const e = d.value;
      const row = rows.get(e.loopId) ?? { loopId: e.loopId, finishedOutcome: undefined, stuckByParent: false, warnings: [] };
      const body = JSON.parse(e.payloadText) as { count?: number; detector?: string; reason?: string; outcome_kind?: string };
      if (e.kindClass === 'ConvergenceWarning') row.warnings.push({ time: e.time.seconds * 1000, detector: body.detector ?? '', reason: body.reason ?? '', count: body.count ?? 0 });
      if (e.kindClass === 'LoopFinished') row.finishedOutcome = body.outcome_kind;
      rows.set(e.loopId, row);
    }
    if (convergence([...rows.values()], now, config).filter((c) => c.firing).length === 0) none.push(seed);
  }
  assert.deepEqual(none, [], `seeds whose demo traffic raises no convergence alert with ${JSON.stringify(config)}`);
});
