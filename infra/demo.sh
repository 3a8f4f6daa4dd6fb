#!/usr/bin/env bash
# The newcomer's first command: installs what it needs, brings up the local
# stack, applies the ClickHouse migrations, produces demo traffic (honest loops,
# planted chain violations and malformed records), ships sample craze journals,
# ingests both, reports, rolls spend up and evaluates the alert rules, then
# serves the page (`agentledger serve`) until Ctrl-C when run in a terminal.
#   infra/demo.sh [--no-serve]
set -euo pipefail
serve=1
for arg in "$@"; do
  case "$arg" in
    --no-serve) serve=0 ;;
    -h | --help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "infra/demo.sh: unknown option $arg (try --help)" >&2; exit 2 ;;
  esac
done
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# Node.js 22+ on PATH for everything below (infra/node.sh).
. infra/node.sh
bash infra/bootstrap.sh
cli() { node bin/agentledger.js "$@"; }

echo "[demo] applying ClickHouse migrations…"
# As the stack's migrator: agentledger's own user may not change the schema.
AGENTLEDGER_CLICKHOUSE_MIGRATOR_USER="${AGENTLEDGER_CLICKHOUSE_MIGRATOR_USER:-agentledger_migrator}" \
  AGENTLEDGER_CLICKHOUSE_MIGRATOR_PASSWORD="${AGENTLEDGER_CLICKHOUSE_MIGRATOR_PASSWORD:-agentledger_migrator}" cli migrate
echo "[demo] checking the services…"
cli doctor

# A topic and group of this run's own, so the demo can run again and again.
run="demo.$(date +%Y%m%d%H%M%S)"
export AGENTLEDGER_ENVELOPE_TOPIC="$run.envelopes" AGENTLEDGER_CRAZE_TOPIC="$run.craze" AGENTLEDGER_KAFKA_GROUP_ID="$run" AGENTLEDGER_METRICS_PORT=0 AGENTLEDGER_WORKER_METRICS_PORT=0
echo "[demo] producing demo traffic to $AGENTLEDGER_ENVELOPE_TOPIC…"
# Started half an hour ago: recent enough for the alert rules, and its unfinished loops have stalled.
cli produce-demo --loops 500 --envelopes 40 --seed "$(date +%s)" --violations --malformed --spend-roots 6 --start-time now-30m
echo "[demo] shipping the sample craze journals (test/fixtures/craze/journal) to $AGENTLEDGER_CRAZE_TOPIC, moved to end 15 min ago…"
# Written in March 2025: moved (times and session ids, src/demo/craze-journals.ts) so the page's last 7 days show them.
cli craze push --shift-to now-15m test/fixtures/craze/journal
echo "[demo] ingesting both topics (verify every chain, account craze spend, store each event once)…"
cli ingest --no-migrate --idle-exit-ms 4000
echo "[demo] loop-runtime chains in ClickHouse (all demo runs so far):"
cli report --limit 12
echo "[demo] craze sessions, costliest first (each demo run ships the same three sessions anew, dated to the run):"
cli sessions
echo "[demo] what the agents spent, by model (loop runtime: verified envelopes only; craze: its usage reports):"
cli spend --by model
echo "[demo] the costliest task trees (root loops with all their sub-agents):"
cli spend --by root --source runtime | head -8
echo "[demo] rolling up spend per hour, model, loop name and root (what \`agentledger worker\` does every 30 s):"
cli rollups sweep
echo "[demo] evaluating the alert rules for a few seconds (what \`agentledger worker\` does every 30 s; no webhook set; pushed to the"
echo "[demo] stack's Alertmanager at http://127.0.0.1:9193, whose example receivers send nothing anywhere)."
echo "[demo] 500 loops are a small fleet: this run lowers four thresholds so every rule has something to say (2 convergence"
echo "[demo] warnings instead of 3 or one counting 3 repeats instead of 5, 3 sub-agent outcomes per kind instead of 20, 10 min"
echo "[demo] waiting on a human instead of 30):"
# The demo loops that warn twice mostly finish Completed (converged after all), and the
# others warn once, counting 1 to 4: without the lower count, one run in three raised no
# convergence alert (test/unit/demo/alerts.test.ts).
AGENTLEDGER_ALERTMANAGER_URL="${AGENTLEDGER_ALERTMANAGER_URL:-http://127.0.0.1:9193}" \
  AGENTLEDGER_ALERT_SWEEP_MS=1000 AGENTLEDGER_ALERT_CONVERGENCE_MIN_WARNINGS=2 AGENTLEDGER_ALERT_CONVERGENCE_COUNT=3 AGENTLEDGER_ALERT_SUBAGENT_MIN_OUTCOMES=3 \
  AGENTLEDGER_ALERT_HUMAN_WAIT_MS=600000 cli worker --stop-after-ms 8000
echo "[demo] the alerts the demo traffic raised (all demo runs so far; \`agentledger alerts --state all\` for resolved ones too):"
for rule in stuck_loop stalled_loop waiting_on_human convergence subagent_failure_rate chain_integrity; do
  echo "  $rule:"; cli alerts --rule "$rule" --limit 3
done
echo "[demo] the same alerts in Alertmanager: amtool alert query --alertmanager.url=http://127.0.0.1:9193 (or http://127.0.0.1:9193/)"
page="http://127.0.0.1:${AGENTLEDGER_SERVE_PORT:-8080}/"
echo "[demo] done. Query ClickHouse at http://127.0.0.1:8123 (agentledger/agentledger), database agentledger;"
echo "[demo] stop the stack with: infra/stack.sh down"
if ((serve)) && [[ -t 0 && -t 1 ]]; then
  echo "[demo] the page: $page  (agentledger serve, read-only, times in UTC; Ctrl-C stops it, the stack keeps running)"
  exec node bin/agentledger.js serve
fi
# The Node.js of infra/node.sh, which may not be the first on the caller's PATH.
echo "[demo] the page: $page  once you run: $(command -v node) bin/agentledger.js serve"
