#!/usr/bin/env bash
# End-to-end throughput of `agentledger ingest` on the local stack (Kafka
# 127.0.0.1:9092, ClickHouse 127.0.0.1:8123), against a bare kafkajs consumer
# reading the same topic in the same run.
#
#   bench/e2e.sh [--loops 10000] [--envelopes 50] [--payload-bytes 1024]
#                [--batch-rows 5000,20000] [--repeat 2] [--no-build] [--keep] [--profile DIR]
#
# 1. produce-demo writes loops x envelopes-per-loop (~1 KB each) to a fresh
#    4-partition topic bench.<ts>.envelopes (not timed);
# 2. runs: every AGENTLEDGER_BATCH_MAX_ROWS value of --batch-rows, --repeat
#    times, in the order A B, B A, ... (so a drifting machine favours neither);
#    each run is a pair, on the same topic:
#    - the bare consumer (bench/e2e-bare.ts, a new group, eachBatch only counts)
#      reads the whole topic: envelopes/s from its process start to the last message;
#    - `agentledger ingest --idle-exit-ms 5000` with a new group and a new
#      database bench_<ts>_<run>_r<rows>, metrics off: wall time from its start
#      until SELECT count() FROM envelopes (polled every second) equals the
#      number produced, nothing subtracted; peak RSS = VmHWM of the process;
#      CPU seconds used meanwhile by it, ClickHouse and Kafka. Its database is
#      then dropped and ClickHouse's merges allowed to settle;
# 3. prints every run, then per setting the medians, PASS/FAIL against
#    ">= 15,000 envelopes/s" and "ratio agentledger/bare >= 0.3", and which
#    batch size was faster; then deletes the topics and groups (--keep leaves
#    them and the databases). Exit 0 only when every setting passes.
#    --profile DIR runs ingest under `node --cpu-prof --cpu-prof-dir=DIR`
#    (slower: for finding where the time goes).
set -euo pipefail
cd "$(dirname "$0")/.."

LOOPS=10000
PER_LOOP=50
PAYLOAD_BYTES=1024
BATCH_ROWS=5000,20000
BUILD=1
KEEP=0
PROFILE_DIR=""
REPEAT=2
TARGET_RATE=15000
TARGET_RATIO=0.3
INGEST_TIMEOUT_S=240

usage() { sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --loops) LOOPS=$2; shift 2 ;;
    --envelopes) PER_LOOP=$2; shift 2 ;;
    --payload-bytes) PAYLOAD_BYTES=$2; shift 2 ;;
    --batch-rows) BATCH_ROWS=$2; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    --keep) KEEP=1; shift ;;
    --profile) PROFILE_DIR=$2; shift 2 ;;
    --repeat) REPEAT=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "e2e.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done

BROKERS=${AGENTLEDGER_KAFKA_BROKERS:-127.0.0.1:9092}
CH_URL=${AGENTLEDGER_CLICKHOUSE_URL:-http://127.0.0.1:8123}
# A throwaway database per run needs a user that may create one: the local
# stack's agentledger_test (agentledger's own writer has no DDL).
CH_USER=${AGENTLEDGER_CLICKHOUSE_USER:-agentledger_test}
CH_PASSWORD=${AGENTLEDGER_CLICKHOUSE_PASSWORD:-agentledger_test}
export AGENTLEDGER_CLICKHOUSE_USER="$CH_USER" AGENTLEDGER_CLICKHOUSE_PASSWORD="$CH_PASSWORD"

TS=$(date -u +%Y%m%d%H%M%S)
TOPIC="bench.${TS}.envelopes"
DLQ="bench.${TS}.dlq"
WORK=$(mktemp -d "/tmp/agentledger-e2e.${TS}.XXXX")
DATABASES=()
GROUPS_MADE=()
INGEST_PID=""

log() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
now_ns() { date +%s%N; }
ch() { # ch SQL [database]
  curl -sS --fail --max-time 10 "${CH_URL}/?user=${CH_USER}&password=${CH_PASSWORD}${2:+&database=$2}" --data-binary "$1"
}
json_field() { node -e 'const o=JSON.parse(require("fs").readFileSync(0,"utf8"));const v=process.argv[1].split(".").reduce((a,k)=>a?.[k],o);process.stdout.write(String(v))' "$1"; }

cleanup() {
  local rc=$?
  if [ -n "$INGEST_PID" ] && kill -0 "$INGEST_PID" 2>/dev/null; then kill "$INGEST_PID" 2>/dev/null || true; wait "$INGEST_PID" 2>/dev/null || true; fi
  if [ "$KEEP" = 1 ]; then
    log "--keep: left topic $TOPIC, databases ${DATABASES[*]:-none}, groups ${GROUPS_MADE[*]:-none}; logs in $WORK"
  else
    log "cleaning up: databases, topics, groups"
    for db in "${DATABASES[@]}"; do ch "DROP DATABASE IF EXISTS ${db}" >/dev/null || log "could not drop database $db"; done
    local groups; groups=$(IFS=,; echo "${GROUPS_MADE[*]:-}")
    node dist/bench/e2e-bare.js cleanup --brokers "$BROKERS" --topics "$TOPIC,$DLQ" --groups "$groups" >&2 || log "Kafka clean-up failed"
    if [ $rc -eq 0 ]; then rm -rf "$WORK"; else log "logs kept in $WORK"; fi
  fi
  exit $rc
}
trap cleanup EXIT

# ---------------------------------------------------------------- stack and build

if ! infra/stack.sh status >/dev/null 2>&1; then log "stack not (fully) up: infra/stack.sh up"; infra/stack.sh up >&2; fi
if [ "$BUILD" = 1 ]; then log "building (npx tsc -p tsconfig.json)"; npx tsc -p tsconfig.json; fi

# ---------------------------------------------------------------- produce (not timed)

log "producing ${LOOPS} loops x ${PER_LOOP} envelopes (~${PAYLOAD_BYTES} B) to ${TOPIC} (4 partitions)"
AGENTLEDGER_ENVELOPE_TOPIC="$TOPIC" AGENTLEDGER_DLQ_TOPIC="$DLQ" AGENTLEDGER_KAFKA_BROKERS="$BROKERS" AGENTLEDGER_LOG_LEVEL=warn \
  node bin/agentledger.js produce-demo --loops "$LOOPS" --envelopes "$PER_LOOP" --payload-bytes "$PAYLOAD_BYTES" --json \
  >"$WORK/produce.json" 2>"$WORK/produce.log"
RECORDS=$(json_field records <"$WORK/produce.json")
ENVELOPES=$(json_field envelopes <"$WORK/produce.json")
PRODUCE_S=$(json_field seconds <"$WORK/produce.json")
if [ "$RECORDS" != "$ENVELOPES" ]; then echo "e2e.sh: produced $RECORDS records for $ENVELOPES envelopes (expected equal: no violations planted)" >&2; exit 1; fi
log "produced ${RECORDS} records in ${PRODUCE_S} s"

# ---------------------------------------------------------------- one bare run, one ingest run

run_bare() { # run_bare LABEL -> sets BARE_RATE
  local group="bench.${TS}.bare.$1"
  GROUPS_MADE+=("$group")
  node dist/bench/e2e-bare.js consume --brokers "$BROKERS" --topic "$TOPIC" --group "$group" --expect "$RECORDS" >"$WORK/bare.$1.json"
  BARE_RATE=$(json_field envelopesPerSecond <"$WORK/bare.$1.json")
}

# CPU seconds (user + system) a process has used so far; 0 when it is gone.
TICKS=$(getconf CLK_TCK)
cpu_s() { awk -v t="$TICKS" '{ sub(/^.*\) /, ""); printf "%.2f", ($12 + $13) / t }' "/proc/$1/stat" 2>/dev/null || echo 0; }
service_pid() { infra/stack.sh status 2>/dev/null | awk -v s="$1" '$1 == s && $2 == "up" { print $4 }'; }
CH_PID=$(service_pid clickhouse)
KAFKA_PID=$(service_pid kafka)

# Waits (up to 60 s) until ClickHouse runs no merge.
settle_merges() {
  local i
  for i in $(seq 1 60); do
    [ "$(ch "SELECT count() FROM system.merges" 2>/dev/null || echo 1)" = 0 ] && return 0
    sleep 1
  done
  log "ClickHouse merges still running after 60 s; going on"
}

# Running and not a zombie waiting to be reaped.
alive() { kill -0 "$1" 2>/dev/null && ! grep -qs '^State:[[:space:]]*Z' "/proc/$1/status"; }

# run_ingest ROWS RUN -> sets INGEST_SECONDS, INGEST_RATE, INGEST_RSS_MB, INGEST_RC
run_ingest() {
  local rows=$1 db="bench_${TS}_$2_r$1" group="bench.${TS}.ingest.$2.r$1"
  DATABASES+=("$db")
  GROUPS_MADE+=("$group")
  local start end count=0 hwm=0 kb cpu=0 ch0 ch1 k0 k1
  local node_cmd=(node)
  [ -n "$PROFILE_DIR" ] && node_cmd=(node --cpu-prof --cpu-prof-dir="$PROFILE_DIR/$2.r$rows")
  ch0=$(cpu_s "${CH_PID:-0}"); k0=$(cpu_s "${KAFKA_PID:-0}")
  start=$(now_ns)
  AGENTLEDGER_ENVELOPE_TOPIC="$TOPIC" AGENTLEDGER_DLQ_TOPIC="$DLQ" AGENTLEDGER_KAFKA_BROKERS="$BROKERS" \
  AGENTLEDGER_KAFKA_GROUP_ID="$group" AGENTLEDGER_CLICKHOUSE_DATABASE="$db" AGENTLEDGER_METRICS_PORT=0 \
  AGENTLEDGER_BATCH_MAX_ROWS="$rows" \
    "${node_cmd[@]}" bin/agentledger.js ingest --idle-exit-ms 5000 2>"$WORK/ingest.$2.r$rows.log" &
  INGEST_PID=$!
  sample_hwm() { kb=$(awk '/^VmHWM:/ {print $2}' "/proc/$INGEST_PID/status" 2>/dev/null || echo 0); [ "${kb:-0}" -gt "$hwm" ] && hwm=$kb; return 0; }
  while :; do
    sleep 1
    sample_hwm
    cpu=$(cpu_s "$INGEST_PID")
    count=$(ch "SELECT count() FROM envelopes" "$db" 2>/dev/null || echo 0)
    if [ "${count:-0}" -ge "$RECORDS" ]; then
      end=$(now_ns); ch1=$(cpu_s "${CH_PID:-0}"); k1=$(cpu_s "${KAFKA_PID:-0}"); cpu=$(cpu_s "$INGEST_PID"); break
    fi
    if ! alive "$INGEST_PID"; then
      echo "e2e.sh: ingest (batch rows $rows) exited with $count of $RECORDS rows stored; log: $WORK/ingest.$2.r$rows.log" >&2
      tail -20 "$WORK/ingest.$2.r$rows.log" >&2; exit 1
    fi
    if [ $(( ($(now_ns) - start) / 1000000000 )) -ge "$INGEST_TIMEOUT_S" ]; then
      echo "e2e.sh: ingest (batch rows $rows) stored only $count of $RECORDS rows in ${INGEST_TIMEOUT_S} s" >&2; exit 1
    fi
  done
  # The idle exit follows 5 s later: keep sampling the high-water mark until then.
  local waited=0
  while alive "$INGEST_PID" && [ $waited -lt 60 ]; do sample_hwm; sleep 0.5; waited=$((waited + 1)); done
  if alive "$INGEST_PID"; then log "ingest did not exit after idling; stopping it"; kill "$INGEST_PID"; fi
  INGEST_RC=0; wait "$INGEST_PID" || INGEST_RC=$?
  INGEST_PID=""
  if [ "$(ch "SELECT count() FROM envelopes" "$db")" != "$RECORDS" ]; then echo "e2e.sh: row count is not $RECORDS after the ingest exited" >&2; exit 1; fi
  local bad; bad=$(ch "SELECT count() FROM envelopes WHERE verdict != 'ok'" "$db")
  [ "$bad" = 0 ] || log "warning: $bad rows with a verdict other than ok"
  # Drop this run's database now and let ClickHouse's merges settle, so the
  # next run does not share the cores with this one's background merges.
  [ "$KEEP" = 1 ] || ch "DROP DATABASE IF EXISTS ${db}" >/dev/null
  settle_merges
  INGEST_SECONDS=$(awk -v ns=$((end - start)) 'BEGIN { printf "%.2f", ns / 1e9 }')
  INGEST_RATE=$(awk -v n="$RECORDS" -v s="$INGEST_SECONDS" 'BEGIN { printf "%d", n / s }')
  INGEST_RSS_MB=$(awk -v kb="$hwm" 'BEGIN { printf "%.0f", kb / 1024 }')
  INGEST_CPU="ingest ${cpu} s, clickhouse $(awk -v a="$ch0" -v b="$ch1" 'BEGIN { printf "%.2f", b - a }') s, kafka $(awk -v a="$k0" -v b="$k1" 'BEGIN { printf "%.2f", b - a }') s"
}

settle_merges
IFS=, read -r -a ROWS_LIST <<<"$BATCH_ROWS"
# Runs: the batch sizes REPEAT times, the order reversed every other time
# (A B, B A, ...), so a drift of the machine does not favour one setting.
RUN_ROWS=()
for ((rep = 1; rep <= REPEAT; rep++)); do
  if ((rep % 2)); then RUN_ROWS+=("${ROWS_LIST[@]}"); else for ((j = ${#ROWS_LIST[@]} - 1; j >= 0; j--)); do RUN_ROWS+=("${ROWS_LIST[j]}"); done; fi
done
RUN_BARE=(); RUN_RATE=(); RUN_SECS=(); RUN_RSS=(); RUN_CPU=(); RUN_RATIO=()
for i in "${!RUN_ROWS[@]}"; do
  rows=${RUN_ROWS[i]}
  log "run $((i + 1))/${#RUN_ROWS[@]}: bare consumer"
  run_bare "$i"
  log "  bare: ${BARE_RATE} envelopes/s"
  log "run $((i + 1))/${#RUN_ROWS[@]}: agentledger ingest, AGENTLEDGER_BATCH_MAX_ROWS=${rows}"
  run_ingest "$rows" "$i"
  RUN_BARE[i]=$BARE_RATE; RUN_RATE[i]=$INGEST_RATE; RUN_SECS[i]=$INGEST_SECONDS; RUN_RSS[i]=$INGEST_RSS_MB; RUN_CPU[i]=$INGEST_CPU
  RUN_RATIO[i]=$(awk -v a="$INGEST_RATE" -v b="$BARE_RATE" 'BEGIN { printf "%.3f", a / b }')
  log "  ingest: ${INGEST_SECONDS} s, ${INGEST_RATE} envelopes/s (ratio ${RUN_RATIO[i]}), peak RSS ${INGEST_RSS_MB} MB, exit ${INGEST_RC}; CPU ${INGEST_CPU}"
done

# ---------------------------------------------------------------- report

median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

CPU=$(node -p 'require("os").cpus()[0].model')
echo
echo "agentledger e2e benchmark  $(date -u +%Y-%m-%dT%H:%M:%SZ)   node $(node --version), $(nproc) x ${CPU}, load avg $(cut -d' ' -f1-3 /proc/loadavg)"
echo "topic ${TOPIC} (4 partitions): ${ENVELOPES} envelopes, ${LOOPS} loops, ~${PAYLOAD_BYTES} B/record; produced in ${PRODUCE_S} s (not timed)"
echo "agentledger: wall time from process start until count() = ${RECORDS} in ClickHouse (polled every 1 s), nothing subtracted"
echo "bare: kafkajs eachBatch that only counts, same fetch sizes, from process start until the last message; run just before each ingest"
echo
printf '%-4s %-10s %9s %14s %10s %7s %10s  %s\n' run batch_rows seconds agentledger/s bare/s ratio peakRSS_MB "CPU during ingest (wall = seconds)"
for i in "${!RUN_ROWS[@]}"; do
  printf '%-4s %-10s %9s %14s %10s %7.2f %10s  %s\n' "$((i + 1))" "${RUN_ROWS[i]}" "${RUN_SECS[i]}" "${RUN_RATE[i]}" "${RUN_BARE[i]}" "${RUN_RATIO[i]}" "${RUN_RSS[i]}" "${RUN_CPU[i]}"
done
echo
echo "per setting (median over its runs; ratio = median of the runs' agentledger/bare):"
best=""; best_rate=0; overall=PASS
for rows in "${ROWS_LIST[@]}"; do
  rates=(); ratios=(); bares=(); rss=()
  for i in "${!RUN_ROWS[@]}"; do
    [ "${RUN_ROWS[i]}" = "$rows" ] || continue
    rates+=("${RUN_RATE[i]}"); ratios+=("${RUN_RATIO[i]}"); bares+=("${RUN_BARE[i]}"); rss+=("${RUN_RSS[i]}")
  done
  rate=$(median "${rates[@]}"); ratio=$(median "${ratios[@]}"); bare=$(median "${bares[@]}")
  peak=$(printf '%s\n' "${rss[@]}" | sort -n | tail -1)
  rate_ok=$(awk -v a="$rate" -v t="$TARGET_RATE" 'BEGIN { print (a >= t) ? "PASS" : "FAIL" }')
  ratio_ok=$(awk -v r="$ratio" -v t="$TARGET_RATIO" 'BEGIN { print (r >= t) ? "PASS" : "FAIL" }')
  [ "$rate_ok" = PASS ] && [ "$ratio_ok" = PASS ] || overall=FAIL
  printf '  AGENTLEDGER_BATCH_MAX_ROWS=%-6s agentledger %6.0f envelopes/s  bare %6.0f/s  ratio %.2f  peak RSS %s MB   rate %s (>= %s/s)  ratio %s (>= %s)\n' \
    "$rows" "$rate" "$bare" "$ratio" "$peak" "$rate_ok" "$TARGET_RATE" "$ratio_ok" "$TARGET_RATIO"
  if awk -v a="$rate" -v b="$best_rate" 'BEGIN { exit !(a > b) }'; then best=$rows; best_rate=$rate; fi
done
[ -n "$PROFILE_DIR" ] && echo "profiles (ingest ran under --cpu-prof: slower than unprofiled): $PROFILE_DIR"
if [ "${#ROWS_LIST[@]}" -gt 1 ]; then printf 'faster: AGENTLEDGER_BATCH_MAX_ROWS=%s (median %.0f envelopes/s)\n' "$best" "$best_rate"; fi
echo "OVERALL: ${overall} (every setting must reach >= ${TARGET_RATE} envelopes/s and ratio >= ${TARGET_RATIO})"
[ "$overall" = PASS ]
