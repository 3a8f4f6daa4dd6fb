#!/usr/bin/env bash
# End-to-end throughput of `agentledger ingest` on the local stack (Kafka
# 127.0.0.1:9092, ClickHouse 127.0.0.1:8123), side by side with three
# references reading or storing the same records in the same run.
#
#   bench/e2e.sh [--loops 10000] [--envelopes 40] [--payload-bytes 1024] [--rounds 5]
#                [--insert-format TabSeparated] [--insert-rows 5000] [--prefill N]
#                [--batch-rows N] [--json FILE] [--no-gate] [--keep] [--no-build]
#                [--profile DIR] [--dist DIR] [--two-processes] [--four-processes] [--against DIR]
#                [--against-node-flags 'FLAGS']
#                [--compression none|gzip|snappy|lz4|zstd] [--no-stages]
#
# 1. produce-demo writes loops x envelopes-per-loop (~1 KB each; by default
#    400,000 envelopes over 10,000 loops) to a fresh 4-partition topic
#    bench.<ts>.envelopes (not timed).
# 2. --rounds rounds; each runs every path once on that topic, the order
#    rotated (round r starts at path r mod the number of paths) so a drifting
#    machine favours none. ClickHouse's merges settle before each path, and
#    each path's database is dropped after it. The paths:
#    - ingest: `agentledger ingest --idle-exit-ms 5000` (default settings),
#      a new group and a new database (its migrations run inside the timed
#      window, as on any start): wall time from process start until SELECT
#      count() FROM envelopes (polled every 1 s) equals the records produced,
#      nothing subtracted; peak RSS = VmHWM of the process; CPU seconds of the
#      process and of ClickHouse's server over the same window;
#    - bare: a kafkajs consumer (bench/e2e-bare.ts, a new group) whose
#      eachBatch only counts: process start until the last message;
#    - insert: ClickHouse's insert ceiling for ingest's own rows. Round 1's
#      ingest rows are exported once (SELECT * … ORDER BY ingested_at,
#      kafka_offset, FORMAT --insert-format: TabSeparated, as ingest sends them (default), JSONEachRow or
#      TSV); each insert round migrates a fresh database (not timed), then
#      bench/e2e-insert.ts posts the file to INSERT INTO envelopes FORMAT F,
#      --insert-rows rows per request, one request at a time: first request
#      to last answer, and ClickHouse's CPU over it;
#    - kafka-engine: ClickHouse's own Kafka engine (JSONEachRow, one
#      consumer) in a fresh database, a MergeTree target and a materialized
#      view into it; the new group is first given offset 0 on every
#      partition (the engine would start a new group at the latest offset):
#      from CREATE MATERIALIZED VIEW until the target's count() equals the
#      records produced (polled every 0.5 s). The view is dropped first, then
#      the Kafka table, then the database (18.16 crashed when a database was
#      dropped under a consuming Kafka table).
#    --prefill N: before the rounds, a database is filled once with N
#    synthetic envelopes (INSERT … SELECT FROM numbers(N) inside ClickHouse,
#    loops prefill-0 … prefill-99999, ~100 B payloads, dated two to four
#    months back; plus their loop_heads), not timed. The ingest path then
#    runs into that database ("with N rows stored"; each round's rows are
#    dropped again after it, by partition), and each round also runs the
#    path ingest-empty (the same into a new empty database), so the ratio
#    prefilled/empty is printed too.
#    --two-processes: each round also runs the path ingest-2p, two
#    `agentledger ingest` processes in one new group and database (the 4
#    partitions shared out by Kafka), timed and checked as ingest; its CPU
#    is the sum of both processes, its RSS the larger of the two; the ratio
#    ingest-2p/ingest is printed too. --four-processes: the same with four
#    processes (path ingest-4p, one partition each), ratio ingest-4p/ingest.
#    --against DIR: each round also runs the path ingest-against, the
#    `ingest` of another build (DIR: the dist/ of another checkout, built
#    with `tsc --outDir`; it reads its SQL and migrations from that
#    checkout), into its own group and database, timed and checked as
#    ingest; the ratio ingest/against is printed too. An A/B of a change
#    on one topic, in one run:
#      git worktree add /tmp/base HEAD~1 && ln -s $PWD/node_modules /tmp/base/
#      (cd /tmp/base && npx tsc -p tsconfig.json --outDir dist)
#      bash bench/e2e.sh --no-gate --against /tmp/base/dist
#    --against-node-flags 'FLAGS': node's flags for the path ingest-against
#    (an A/B of a V8 setting on the same build:
#    --against dist --against-node-flags '--max-semi-space-size=32').
#    --compression C (not none): the same records are also produced, not
#    timed, to a second topic bench.<ts>.envelopes-C with produce-demo
#    --compression C, and each round also runs the path ingest-compressed,
#    ingest of that topic (its own group and database), timed and checked
#    as ingest; the report prints ingest's CPU µs per envelope on both
#    topics and their ratio, per round and the median.
# 3. prints every round, per path min / median / max envelopes/s, the
#    ratios ingest/bare, ingest/insert, ingest/kafka-engine (per round, then
#    min / median / max), CPU µs per envelope (medians), ingest's peak RSS,
#    and the targets with PASS/FAIL: ingest median >= 45,000/s;
#    ingest/kafka-engine >= 1.0; ingest/insert >= 0.5; ingest/bare >= 0.22;
#    ingest CPU <= 15 µs/envelope; peak RSS <= 400 MB. Exit 0 only when all
#    pass (--no-gate: 0 anyway); everything is printed either way.
#    Then, after the timed rounds (profiling never runs inside them), the
#    CPU budget per stage, unless --no-stages: one more ingest pass per build
#    (this build, and the --against build when given) over the same topic
#    into its own group and database, under `node --cpu-prof` (one
#    .cpuprofile per thread, worker threads included) and with ClickHouse's
#    query log on for its queries only (ch_log_queries=1 in its URL, its
#    User-Agent tagged). bench/e2e-stages.js splits the profiles' samples
#    into stages (bench/stages.ts: Kafka fetch + record decoding, decode,
#    verify, account, row encoding, ClickHouse I/O, GC, pipeline/ingest core, the
#    rest) scaled to the CPU of the threads that ran them (/proc/<pid>/task:
#    the main thread's, the worker threads'; V8's and node's helper threads
#    are rows of their own, all summing to /proc/<pid>/stat); ClickHouse's
#    CPU by kind from system.query_log (insert into envelopes, loop_heads and
#    other derived writes, the heads/versions/progress read-backs, other),
#    merges and background as the server's CPU minus those queries'; both
#    cores' busy time and idle share (/proc/stat) and the broker's CPU over
#    the pass; and the in-process batch step of the same build
#    (verify-inprocess.js --only batch, up to 100,000 envelopes, 1 round) in
#    CPU µs per envelope, with ingest's CPU per envelope against it (target
#    <= 1.5). The report prints it as a table in µs per envelope: stage, this
#    build, the --against build, their ratio.
#    --json FILE writes every raw per-round figure and the summary.
#    --batch-rows N sets AGENTLEDGER_BATCH_MAX_ROWS for ingest (default:
#    ingest's own default). --profile DIR runs ingest under `node --cpu-prof`
#    (slower: for finding where the time goes). --no-build skips the
#    TypeScript build; --dist DIR builds into and runs from DIR instead of
#    dist/ (the CLI through DIR/bench/e2e-cli.js). Topics, groups and
#    databases are removed at the end, also after a failure (--keep leaves
#    them, but never a Kafka engine table).
set -euo pipefail
CALLER_DIR=$PWD
cd "$(dirname "$0")/.."

LOOPS=10000
PER_LOOP=40
PAYLOAD_BYTES=1024
TWO_PROCESSES=0
FOUR_PROCESSES=0
AGAINST=""
AGAINST_NODE_FLAGS=""
COMPRESSION=none
ROUNDS=5
INSERT_FORMAT=TabSeparated
INSERT_ROWS=5000
PREFILL=0
BATCH_ROWS=""
JSON_OUT=""
GATE=1
BUILD=1
KEEP=0
PROFILE_DIR=""
DIST=dist
STAGES=1
TIMEOUT_S=300

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }
absolute() { case "$1" in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
whole() { [[ "$2" =~ ^[0-9]+$ ]] && [ "$2" -ge "$3" ] || { echo "e2e.sh: $1 takes a whole number >= $3, not '$2'" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case "$1" in
    --loops) whole "$1" "$2" 1; LOOPS=$2; shift 2 ;;
    --envelopes) whole "$1" "$2" 1; PER_LOOP=$2; shift 2 ;;
    --payload-bytes) whole "$1" "$2" 0; PAYLOAD_BYTES=$2; shift 2 ;;
    --rounds) whole "$1" "$2" 1; ROUNDS=$2; shift 2 ;;
    --insert-format) INSERT_FORMAT=$2; shift 2 ;;
    --insert-rows) whole "$1" "$2" 1; INSERT_ROWS=$2; shift 2 ;;
    --prefill) whole "$1" "$2" 0; PREFILL=$2; shift 2 ;;
    --batch-rows) whole "$1" "$2" 1; BATCH_ROWS=$2; shift 2 ;;
    --json) JSON_OUT=$(cd "$CALLER_DIR" && absolute "$2"); shift 2 ;;
    --no-gate) GATE=0; shift ;;
    --no-build) BUILD=0; shift ;;
    --keep) KEEP=1; shift ;;
    --profile) PROFILE_DIR=$(cd "$CALLER_DIR" && absolute "$2"); shift 2 ;;
    --dist) DIST=${2%/}; shift 2 ;;
    --two-processes) TWO_PROCESSES=1; shift ;;
    --four-processes) FOUR_PROCESSES=1; shift ;;
    --against) AGAINST=$(cd "$CALLER_DIR" && absolute "${2%/}"); shift 2 ;;
    --against-node-flags) AGAINST_NODE_FLAGS=$2; shift 2 ;;
    --compression) COMPRESSION=$2; shift 2 ;;
    --no-stages) STAGES=0; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "e2e.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done
case "$INSERT_FORMAT" in JSONEachRow|TabSeparated|TSV) ;; *) echo "e2e.sh: --insert-format is JSONEachRow, TabSeparated or TSV" >&2; exit 2 ;; esac
case "$COMPRESSION" in none|gzip|snappy|lz4|zstd) ;; *) echo "e2e.sh: --compression is none, gzip, snappy, lz4 or zstd" >&2; exit 2 ;; esac
# bin/agentledger.js loads dist/; a build elsewhere is run through its own launcher.
if [ "$DIST" = dist ]; then CLI=bin/agentledger.js; else CLI="$DIST/bench/e2e-cli.js"; fi
if [ -n "$AGAINST" ] && [ ! -f "$AGAINST/bench/e2e-cli.js" ]; then
  echo "e2e.sh: --against $AGAINST holds no bench/e2e-cli.js: give the dist/ of a built checkout" >&2; exit 2
fi

BROKERS=${AGENTLEDGER_KAFKA_BROKERS:-127.0.0.1:9092}
CH_URL=${AGENTLEDGER_CLICKHOUSE_URL:-http://127.0.0.1:8123}
# A throwaway database per run needs a user that may create one: the local
# stack's agentledger_test (agentledger's own writer has no DDL).
CH_USER=${AGENTLEDGER_CLICKHOUSE_USER:-agentledger_test}
CH_PASSWORD=${AGENTLEDGER_CLICKHOUSE_PASSWORD:-agentledger_test}
export AGENTLEDGER_CLICKHOUSE_USER="$CH_USER" AGENTLEDGER_CLICKHOUSE_PASSWORD="$CH_PASSWORD"
unset AGENTLEDGER_CLICKHOUSE_MIGRATOR_USER AGENTLEDGER_CLICKHOUSE_MIGRATOR_PASSWORD

TS=$(date -u +%Y%m%d%H%M%S)
TOPIC="bench.${TS}.envelopes"
# The same records with --compression, for the path ingest-compressed.
TOPIC_C=""
[ "$COMPRESSION" = none ] || TOPIC_C="bench.${TS}.envelopes-${COMPRESSION}"
DLQ="bench.${TS}.dlq"
WORK=$(mktemp -d "/tmp/agentledger-e2e.${TS}.XXXX")
RUNS="$WORK/runs.jsonl"
EXPORT="$WORK/envelopes.${INSERT_FORMAT}"
DATABASES=()
GROUPS_MADE=()
CHILD_PIDS=()
KAFKA_LIVE_DB=""
PREFILL_DB=""
PREFILL_TOPIC=bench.prefill
REPORTED=0

log() { printf '[%s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
now_ns() { date +%s%N; }
# ch_to FILE MAX_SECONDS SQL [database] [extra URL parameters]: the answer
# into FILE; on an error, ClickHouse's message on stderr and status 1.
ch_to() {
  local code
  code=$(curl -sS ${2:+--max-time $2} -o "$1" -w '%{http_code}' \
    "${CH_URL}/?user=${CH_USER}&password=${CH_PASSWORD}${4:+&database=$4}${5:+&$5}" --data-binary "$3") || return 1
  [ "$code" = 200 ] && return 0
  echo "ClickHouse answered HTTP $code: $(head -c 600 "$1")" >&2
  return 1
}
CH_ANSWER="$WORK/answer"
ch() { # ch SQL [database] [extra URL parameters]: short statements and polls; the answer on stdout
  ch_to "$CH_ANSWER" 30 "$@" && cat "$CH_ANSWER"
}
ch_long() { # the same without a time limit: bulk inserts and mutations
  ch_to "$CH_ANSWER" "" "$@" && cat "$CH_ANSWER"
}
json_field() { node -e 'const o=JSON.parse(require("fs").readFileSync(0,"utf8"));const v=process.argv[1].split(".").reduce((a,k)=>a?.[k],o);process.stdout.write(String(v))' "$1"; }
fmt_int() { awk -v n="$1" 'BEGIN { s = sprintf("%d", n); r = ""; while (length(s) > 3) { r = "," substr(s, length(s) - 2) r; s = substr(s, 1, length(s) - 3) } print s r }'; }

# Drops a Kafka engine's view, then its table, then the rest: never the
# database under a consuming Kafka table (that crashed 18.16).
drop_kafka_engine() { # drop_kafka_engine DB
  ch "DROP TABLE IF EXISTS v" "$1" >/dev/null || log "could not drop $1.v"
  ch "DROP TABLE IF EXISTS q" "$1" >/dev/null || log "could not drop $1.q"
  KAFKA_LIVE_DB=""
  sleep 1
}

cleanup() {
  local rc=$?
  local p
  for p in "${CHILD_PIDS[@]}"; do
    if kill -0 "$p" 2>/dev/null; then kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; fi
  done
  # Even with --keep: a Kafka table left behind would consume for ever inside the server.
  [ -z "$KAFKA_LIVE_DB" ] || drop_kafka_engine "$KAFKA_LIVE_DB"
  rm -f "$EXPORT"
  if [ "$KEEP" = 1 ]; then
    log "--keep: left topic $TOPIC, databases ${DATABASES[*]:-none}, groups ${GROUPS_MADE[*]:-none}; files in $WORK"
  else
    log "cleaning up: databases, topics, groups"
    for db in "${DATABASES[@]}"; do ch "DROP DATABASE IF EXISTS ${db}" >/dev/null || log "could not drop database $db"; done
    local groups; groups=$(IFS=,; echo "${GROUPS_MADE[*]:-}")
    node "$DIST/bench/e2e-bare.js" cleanup --brokers "$BROKERS" --topics "$TOPIC,$DLQ${TOPIC_C:+,$TOPIC_C}" --groups "$groups" >&2 || log "Kafka clean-up failed"
    # After the report (PASS or FAIL) nothing is left to look into; after a failure, the logs are.
    if [ $rc = 0 ] || [ $REPORTED = 1 ]; then rm -rf "$WORK"; else log "logs kept in $WORK"; fi
  fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------- stack and build

if ! infra/stack.sh status >/dev/null 2>&1; then log "stack not (fully) up: infra/stack.sh up"; infra/stack.sh up >&2; fi
if [ "$BUILD" = 1 ]; then log "building (npx tsc -p tsconfig.json --outDir $DIST)"; npx tsc -p tsconfig.json --outDir "$DIST"; fi
CH_VERSION=$(ch "SELECT version()")

# CPU seconds (user + system) a process has used so far.
TICKS=$(getconf CLK_TCK)
cpu_s() { awk -v t="$TICKS" '{ sub(/^.*\) /, ""); printf "%.2f", ($12 + $13) / t }' "/proc/$1/stat" 2>/dev/null || echo 0; }
service_pid() { infra/stack.sh status 2>/dev/null | awk -v s="$1" '$1 == s && $2 == "up" { print $4 }'; }
CH_PID=$(service_pid clickhouse)
KAFKA_PID=$(service_pid kafka)
[ -n "$CH_PID" ] || log "warning: no pid for ClickHouse from infra/stack.sh status: its CPU is not measured"
# "null" when the pid is unknown, else the seconds between two cpu_s readings.
# (A restart in between makes it negative: null then too.)
cpu_delta() { if [ -z "$1" ]; then echo null; else awk -v a="$2" -v b="$3" 'BEGIN { if (b < a) print "null"; else printf "%.2f", b - a }'; fi; }

# Waits (up to $1 s, default 60) until ClickHouse runs no merge.
settle_merges() {
  local i limit=${1:-60}
  for ((i = 0; i < limit; i++)); do
    [ "$(ch "SELECT count() FROM system.merges" 2>/dev/null)" = 0 ] && return 0
    sleep 1
  done
  log "ClickHouse merges still running after ${limit} s; going on"
}

# Running and not a zombie waiting to be reaped.
alive() { kill -0 "$1" 2>/dev/null && ! grep -qs '^State:[[:space:]]*Z' "/proc/$1/status"; }

drop_database() { [ "$KEEP" = 1 ] || ch "DROP DATABASE IF EXISTS $1" >/dev/null; }

# One JSON line per path and round, for bench/e2e-report.ts.
emit_run() { # emit_run ROUND SLOT PATH SECONDS PROCESS_CPU CH_CPU KAFKA_CPU RSS_MB
  printf '{"round":%s,"slot":%s,"path":"%s","envelopes":%s,"seconds":%s,"processCpuS":%s,"clickhouseCpuS":%s,"kafkaCpuS":%s,"rssMb":%s}\n' \
    "$1" "$2" "$3" "$RECORDS" "$4" "${5:-null}" "${6:-null}" "${7:-null}" "${8:-null}" >>"$RUNS"
}
rate_of() { awk -v n="$RECORDS" -v s="$1" 'BEGIN { printf "%d", n / s }'; }
per_env() { awk -v s="$1" -v n="$RECORDS" 'BEGIN { if (s == "null") print "-"; else printf "%.1f", s * 1e6 / n }'; }

# ---------------------------------------------------------------- produce (not timed)

log "producing ${LOOPS} loops x ${PER_LOOP} envelopes (~${PAYLOAD_BYTES} B) to ${TOPIC} (4 partitions)"
AGENTLEDGER_ENVELOPE_TOPIC="$TOPIC" AGENTLEDGER_DLQ_TOPIC="$DLQ" AGENTLEDGER_KAFKA_BROKERS="$BROKERS" AGENTLEDGER_LOG_LEVEL=warn AGENTLEDGER_LOG_FORMAT=text \
  node "$CLI" produce-demo --loops "$LOOPS" --envelopes "$PER_LOOP" --payload-bytes "$PAYLOAD_BYTES" --json \
  >"$WORK/produce.json" 2>"$WORK/produce.log"
RECORDS=$(json_field records <"$WORK/produce.json")
ENVELOPES=$(json_field envelopes <"$WORK/produce.json")
PRODUCE_S=$(json_field seconds <"$WORK/produce.json")
if [ "$RECORDS" != "$ENVELOPES" ]; then echo "e2e.sh: produced $RECORDS records for $ENVELOPES envelopes (expected equal: no violations planted)" >&2; exit 1; fi
log "produced $(fmt_int "$RECORDS") records in ${PRODUCE_S} s"
if [ -n "$TOPIC_C" ]; then
  log "producing the same records with --compression ${COMPRESSION} to ${TOPIC_C}"
  AGENTLEDGER_ENVELOPE_TOPIC="$TOPIC_C" AGENTLEDGER_DLQ_TOPIC="$DLQ" AGENTLEDGER_KAFKA_BROKERS="$BROKERS" AGENTLEDGER_LOG_LEVEL=warn AGENTLEDGER_LOG_FORMAT=text \
    node "$CLI" produce-demo --loops "$LOOPS" --envelopes "$PER_LOOP" --payload-bytes "$PAYLOAD_BYTES" --compression "$COMPRESSION" --json \
    >"$WORK/produce-${COMPRESSION}.json" 2>"$WORK/produce-${COMPRESSION}.log"
  [ "$(json_field records <"$WORK/produce-${COMPRESSION}.json")" = "$RECORDS" ] || { echo "e2e.sh: the ${COMPRESSION} topic got another record count" >&2; exit 1; }
  log "produced them in $(json_field seconds <"$WORK/produce-${COMPRESSION}.json") s"
fi

# ---------------------------------------------------------------- prefill (not timed)

migrate_db() { # migrate_db DB LOG: creates DB with agentledger's schema, as ingest does on start
  AGENTLEDGER_CLICKHOUSE_DATABASE="$1" AGENTLEDGER_LOG_LEVEL=warn AGENTLEDGER_LOG_FORMAT=text node "$CLI" migrate >"$2" 2>&1 \
    || { echo "e2e.sh: migrate of $1 failed; log: $2" >&2; tail -20 "$2" >&2; exit 1; }
}

PREFILL_PARTITIONS=""
if [ "$PREFILL" -gt 0 ]; then
  PREFILL_DB="bench_${TS}_prefill"
  DATABASES+=("$PREFILL_DB")
  log "prefill: migrating ${PREFILL_DB}, then $(fmt_int "$PREFILL") synthetic envelopes (not timed)"
  migrate_db "$PREFILL_DB" "$WORK/migrate.prefill.log"
  chunk=2000000
  for ((from = 0, c = 0; from < PREFILL; from += chunk, c++)); do
    n=$((PREFILL - from < chunk ? PREFILL - from : chunk))
    # Row i: loop prefill-(i % 100000), seq i / 100000 + 1; one stamp per
    # insert as a flush writes, 35 to 97 days back: never the current month,
    # whose partitions hold the rounds' rows and are dropped after each.
    ch_long "INSERT INTO envelopes (loop_id, seq, time, time_text, kind, kind_class, hash, computed_hash, payload, verdict, detail, evidence,
                                    kafka_topic, kafka_partition, kafka_offset, ingested_at)
      SELECT concat('prefill-', toString(n % 100000)) AS loop_id, intDiv(n, 100000) + 1 AS seq,
             now() - $(((35 + (c % 3) * 31) * 86400)) AS time, '2026-01-01T00:00:00.000000000Z' AS time_text,
             'ModelCalled' AS kind, 'ModelCalled' AS kind_class,
             lower(hex(SHA256(toString(n)))) AS hash, lower(hex(SHA256(toString(n)))) AS computed_hash,
             concat('{\"provider\":\"bench\",\"model\":\"m\",\"n\":', toString(n), ',\"pad\":\"', 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx', '\"}') AS payload,
             'ok' AS verdict, '' AS detail, '' AS evidence,
             '${PREFILL_TOPIC}' AS kafka_topic, toUInt32(n % 4) AS kafka_partition, intDiv(n, 4) AS kafka_offset,
             now() - $(((35 + (c % 3) * 31) * 86400)) AS ingested_at
      FROM (SELECT number + ${from} AS n FROM numbers(${n}))" "$PREFILL_DB" "max_insert_block_size=$((n + 1))" >/dev/null
    log "prefill: $(fmt_int $((from + n))) of $(fmt_int "$PREFILL") rows"
  done
  ch_long "INSERT INTO loop_heads
    SELECT loop_id, max(seq), argMax(hash, seq), argMax(computed_hash, seq), argMax(time_text, seq), 'ok',
           any(kafka_topic), any(kafka_partition), max(kafka_offset), max(ingested_at)
    FROM envelopes GROUP BY loop_id" "$PREFILL_DB" >/dev/null
  settle_merges 600
  PREFILL_PARTITIONS=$(ch "SELECT DISTINCT partition FROM system.parts WHERE database = '${PREFILL_DB}' AND table = 'envelopes' AND active ORDER BY partition" | paste -sd, -)
  log "prefill: envelopes holds $(fmt_int "$(ch "SELECT count() FROM envelopes" "$PREFILL_DB")") rows in $(ch "SELECT count() FROM system.parts WHERE database = '${PREFILL_DB}' AND table = 'envelopes' AND active") active parts (partitions ${PREFILL_PARTITIONS})"
fi

# Takes a round's rows out of the prefilled database again, so the next
# round's ingest (which reads its progress from the stored rows) starts from
# the same state: drop every envelopes partition the prefill did not make,
# and the round's loop heads and violations.
unfill_round() {
  local p
  for p in $(ch "SELECT DISTINCT partition FROM system.parts WHERE database = '${PREFILL_DB}' AND table = 'envelopes' AND active"); do
    case ",${PREFILL_PARTITIONS}," in *",$p,"*) ;; *) ch "ALTER TABLE envelopes DROP PARTITION $p" "$PREFILL_DB" >/dev/null ;; esac
  done
  local t
  for t in loop_heads chain_violations; do
    if [ "$(ch "SELECT count() FROM $t WHERE kafka_topic != '${PREFILL_TOPIC}'" "$PREFILL_DB")" != 0 ]; then
      ch "ALTER TABLE $t DELETE WHERE kafka_topic != '${PREFILL_TOPIC}'" "$PREFILL_DB" >/dev/null
    fi
  done
  local i
  for ((i = 0; i < 300; i++)); do
    [ "$(ch "SELECT count() FROM system.mutations WHERE database = '${PREFILL_DB}' AND is_done = 0")" = 0 ] && break
    sleep 1
  done
  local left; left=$(ch "SELECT count() FROM envelopes" "$PREFILL_DB")
  [ "$left" = "$PREFILL" ] || { echo "e2e.sh: the prefilled database holds $left rows after removing the round's, not $PREFILL" >&2; exit 1; }
}

# ---------------------------------------------------------------- the paths

# run_ingest PATH ROUND SLOT: PATH is ingest (into the prefilled database
# when --prefill), ingest-empty, ingest-2p, ingest-4p, ingest-against or
# ingest-compressed (the --compression topic).
run_ingest() {
  local path=$1 round=$2 slot=$3 db group base=0 topic=$TOPIC
  [ "$path" = ingest-compressed ] && topic=$TOPIC_C
  group="bench.${TS}.${path}.r${round}"
  if [ "$path" = ingest ] && [ -n "$PREFILL_DB" ]; then db=$PREFILL_DB; base=$PREFILL; else db="bench_${TS}_${path//-/_}_r${round}"; DATABASES+=("$db"); fi
  GROUPS_MADE+=("$group")
  local logf="$WORK/${path}.r${round}.log"
  local start end count=0 stored=0 hwm=0 kb cpu=0 ch0 ch1 k0 k1
  local node_cmd=(node)
  [ -n "$PROFILE_DIR" ] && node_cmd=(node --cpu-prof --cpu-prof-dir="$PROFILE_DIR/${path}.r${round}")
  local batch_env=()
  [ -n "$BATCH_ROWS" ] && batch_env=(AGENTLEDGER_BATCH_MAX_ROWS="$BATCH_ROWS")
  local processes=1 p cli=$CLI
  [ "$path" = ingest-2p ] && processes=2
  [ "$path" = ingest-4p ] && processes=4
  [ "$path" = ingest-against ] && cli="$AGAINST/bench/e2e-cli.js"
  # shellcheck disable=SC2206 # the flags are words
  [ "$path" = ingest-against ] && [ -n "$AGAINST_NODE_FLAGS" ] && node_cmd+=($AGAINST_NODE_FLAGS)
  ch0=$(cpu_s "${CH_PID:-0}"); k0=$(cpu_s "${KAFKA_PID:-0}")
  start=$(now_ns)
  CHILD_PIDS=()
  for ((p = 1; p <= processes; p++)); do
    env AGENTLEDGER_ENVELOPE_TOPIC="$topic" AGENTLEDGER_DLQ_TOPIC="$DLQ" AGENTLEDGER_KAFKA_BROKERS="$BROKERS" \
      AGENTLEDGER_KAFKA_GROUP_ID="$group" AGENTLEDGER_CLICKHOUSE_DATABASE="$db" AGENTLEDGER_METRICS_PORT=0 "${batch_env[@]}" \
      "${node_cmd[@]}" "$cli" ingest --idle-exit-ms 5000 2>"${logf%.log}${p/#1/}.log" &
    CHILD_PIDS+=($!)
  done
  # The high-water mark is the largest process's; the CPU is the sum of all.
  sample_hwm() { local q; for q in "${CHILD_PIDS[@]}"; do kb=$(awk '/^VmHWM:/ {print $2}' "/proc/$q/status" 2>/dev/null || echo 0); [ "${kb:-0}" -gt "$hwm" ] && hwm=$kb; done; return 0; }
  cpu_children() { local sum=0 c q; for q in "${CHILD_PIDS[@]}"; do c=$(cpu_s "$q"); sum=$(awk -v a="$sum" -v b="$c" 'BEGIN { printf "%.2f", a + b }'); done; echo "$sum"; }
  any_dead() { local q; for q in "${CHILD_PIDS[@]}"; do alive "$q" || return 0; done; return 1; }
  any_alive() { local q; for q in "${CHILD_PIDS[@]}"; do alive "$q" && return 0; done; return 1; }
  while :; do
    sleep 1
    sample_hwm
    cpu=$(cpu_children)
    count=$(ch "SELECT count() FROM envelopes" "$db" 2>/dev/null) || count=0
    stored=$(( ${count:-0} - base ))
    if [ "$stored" -ge "$RECORDS" ]; then
      end=$(now_ns); ch1=$(cpu_s "${CH_PID:-0}"); k1=$(cpu_s "${KAFKA_PID:-0}"); cpu=$(cpu_children); break
    fi
    if any_dead; then
      echo "e2e.sh: ${path} (round ${round}) exited with $stored of $RECORDS rows stored; log: $logf" >&2
      tail -20 "$logf" >&2; exit 1
    fi
    if [ $(( ($(now_ns) - start) / 1000000000 )) -ge "$TIMEOUT_S" ]; then
      echo "e2e.sh: ${path} (round ${round}) stored only $stored of $RECORDS rows in ${TIMEOUT_S} s; log: $logf" >&2; exit 1
    fi
  done
  # The idle exit follows 5 s later: keep sampling the high-water mark until then.
  local waited=0 rc=0 prc
  while any_alive && [ $waited -lt 60 ]; do sample_hwm; sleep 0.5; waited=$((waited + 1)); done
  for p in "${CHILD_PIDS[@]}"; do
    if alive "$p"; then log "ingest did not exit after idling; stopping it"; kill "$p"; fi
    prc=0; wait "$p" || prc=$?
    [ "$prc" = 0 ] || rc=$prc
  done
  CHILD_PIDS=()
  [ "$rc" = 0 ] || log "warning: ingest exited with $rc; log: $logf"
  if [ $(( $(ch "SELECT count() FROM envelopes" "$db") - base )) != "$RECORDS" ]; then echo "e2e.sh: row count is not $RECORDS after the ingest exited" >&2; exit 1; fi
  local bad; bad=$(ch "SELECT count() FROM envelopes WHERE kafka_topic = '${topic}' AND verdict != 'ok'" "$db")
  [ "$bad" = 0 ] || log "warning: $bad rows with a verdict other than ok"
  if [ ! -s "$EXPORT" ]; then
    # The insert path's rows: this ingest's own, in about the order they arrived.
    log "  exporting this round's envelopes rows (FORMAT ${INSERT_FORMAT}) for the insert path"
    ch_to "$EXPORT" "" "SELECT * FROM envelopes WHERE kafka_topic = '${topic}' ORDER BY ingested_at, kafka_offset, kafka_partition FORMAT ${INSERT_FORMAT}" "$db" \
      "max_bytes_before_external_sort=1000000000"
    local lines; lines=$(wc -l <"$EXPORT")
    [ "$lines" = "$RECORDS" ] || { echo "e2e.sh: the export holds $lines rows, not $RECORDS" >&2; exit 1; }
    log "  exported $(fmt_int "$lines") rows, $(( $(stat -c %s "$EXPORT") / 1048576 )) MiB"
  fi
  if [ "$db" = "$PREFILL_DB" ]; then unfill_round; else drop_database "$db"; fi
  local seconds ch_cpu; seconds=$(awk -v ns=$((end - start)) 'BEGIN { printf "%.3f", ns / 1e9 }')
  ch_cpu=$(cpu_delta "$CH_PID" "$ch0" "$ch1")
  emit_run "$round" "$slot" "$path" "$seconds" "$cpu" "$ch_cpu" "$(cpu_delta "$KAFKA_PID" "$k0" "$k1")" "$(awk -v kb="$hwm" 'BEGIN { printf "%.0f", kb / 1024 }')"
  log "  ${path}: ${seconds} s, $(fmt_int "$(rate_of "$seconds")") envelopes/s, CPU $(per_env "$cpu") µs/envelope (ClickHouse $(per_env "$ch_cpu")), peak RSS $((hwm / 1024)) MB, exit ${rc}"
}

run_bare() { # run_bare ROUND SLOT
  local round=$1 slot=$2 group="bench.${TS}.bare.r$1" ch0 ch1 k0 k1 out="$WORK/bare.r$1.json"
  GROUPS_MADE+=("$group")
  ch0=$(cpu_s "${CH_PID:-0}"); k0=$(cpu_s "${KAFKA_PID:-0}")
  node "$DIST/bench/e2e-bare.js" consume --brokers "$BROKERS" --topic "$TOPIC" --group "$group" --expect "$RECORDS" >"$out"
  ch1=$(cpu_s "${CH_PID:-0}"); k1=$(cpu_s "${KAFKA_PID:-0}")
  local seconds cpu; seconds=$(json_field secondsFromStart <"$out"); cpu=$(json_field cpuSeconds <"$out")
  emit_run "$round" "$slot" bare "$seconds" "$cpu" "$(cpu_delta "$CH_PID" "$ch0" "$ch1")" "$(cpu_delta "$KAFKA_PID" "$k0" "$k1")" null
  log "  bare: $(printf '%.3f' "$seconds") s, $(fmt_int "$(rate_of "$seconds")") envelopes/s, CPU $(per_env "$cpu") µs/envelope"
}

run_insert() { # run_insert ROUND SLOT
  local round=$1 slot=$2 db="bench_${TS}_insert_r$1" out="$WORK/insert.r$1.json"
  DATABASES+=("$db")
  migrate_db "$db" "$WORK/migrate.insert.r${round}.log"
  settle_merges
  node "$DIST/bench/e2e-insert.js" --file "$EXPORT" --database "$db" --format "$INSERT_FORMAT" --rows "$INSERT_ROWS" \
    --url "$CH_URL" --user "$CH_USER" --password "$CH_PASSWORD" ${CH_PID:+--ch-pid "$CH_PID"} >"$out"
  local n; n=$(ch "SELECT count() FROM envelopes" "$db")
  [ "$n" = "$RECORDS" ] || { echo "e2e.sh: the insert path stored $n rows, not $RECORDS" >&2; exit 1; }
  drop_database "$db"
  local seconds ch_cpu; seconds=$(json_field seconds <"$out"); ch_cpu=$(json_field clickhouseCpuSeconds <"$out")
  emit_run "$round" "$slot" insert "$seconds" null "$ch_cpu" null null
  log "  insert: $(printf '%.3f' "$seconds") s in $(json_field requests <"$out") requests, $(fmt_int "$(rate_of "$seconds")") rows/s, ClickHouse $(per_env "$ch_cpu") µs/envelope"
}

run_kafka_engine() { # run_kafka_engine ROUND SLOT
  local round=$1 slot=$2 db="bench_${TS}_kafka_r$1" group="bench.${TS}.kafka.r$1"
  DATABASES+=("$db")
  GROUPS_MADE+=("$group")
  # A new group starts at the latest offset in 18.16's engine: commit 0 first.
  node "$DIST/bench/e2e-bare.js" reset-group --brokers "$BROKERS" --topic "$TOPIC" --group "$group" >&2
  ch "CREATE DATABASE $db" >/dev/null
  KAFKA_LIVE_DB=$db
  # The record as produce-demo writes it (Go's encoding/json of an Envelope):
  # Hash is an array of 32 numbers, Payload base64 text.
  ch "CREATE TABLE q (LoopID String, Seq UInt64, Time String, Kind String, Payload String, Hash Array(UInt8))
      ENGINE = Kafka('${BROKERS}', '${TOPIC}', '${group}', 'JSONEachRow')" "$db" >/dev/null
  ch "CREATE TABLE t (LoopID String, Seq UInt64, Time String, Kind String, Payload String, Hash Array(UInt8))
      ENGINE = MergeTree ORDER BY (LoopID, Seq)" "$db" >/dev/null
  settle_merges
  local start end count=0 ch0 ch1 k0 k1
  ch0=$(cpu_s "${CH_PID:-0}"); k0=$(cpu_s "${KAFKA_PID:-0}")
  start=$(now_ns)
  ch "CREATE MATERIALIZED VIEW v TO t AS SELECT * FROM q" "$db" >/dev/null
  while :; do
    sleep 0.5
    count=$(ch "SELECT count() FROM t" "$db" 2>/dev/null) || count=0
    if [ "${count:-0}" -ge "$RECORDS" ]; then end=$(now_ns); ch1=$(cpu_s "${CH_PID:-0}"); k1=$(cpu_s "${KAFKA_PID:-0}"); break; fi
    if [ $(( ($(now_ns) - start) / 1000000000 )) -ge "$TIMEOUT_S" ]; then
      echo "e2e.sh: the Kafka engine stored only $count of $RECORDS rows in ${TIMEOUT_S} s" >&2; exit 1
    fi
  done
  drop_kafka_engine "$db"
  local n; n=$(ch "SELECT count() FROM t" "$db")
  [ "$n" = "$RECORDS" ] || log "warning: the Kafka engine stored $n rows for $RECORDS records"
  drop_database "$db"
  local seconds ch_cpu; seconds=$(awk -v ns=$((end - start)) 'BEGIN { printf "%.3f", ns / 1e9 }')
  ch_cpu=$(cpu_delta "$CH_PID" "$ch0" "$ch1")
  emit_run "$round" "$slot" kafka-engine "$seconds" null "$ch_cpu" "$(cpu_delta "$KAFKA_PID" "$k0" "$k1")" null
  log "  kafka-engine: ${seconds} s, $(fmt_int "$(rate_of "$seconds")") envelopes/s, ClickHouse $(per_env "$ch_cpu") µs/envelope"
}

# ---------------------------------------------------------------- rounds

PATHS=(ingest bare insert kafka-engine)
[ "$PREFILL" -gt 0 ] && PATHS+=(ingest-empty)
[ "$TWO_PROCESSES" = 1 ] && PATHS+=(ingest-2p)
[ "$FOUR_PROCESSES" = 1 ] && PATHS+=(ingest-4p)
[ -n "$AGAINST" ] && PATHS+=(ingest-against)
[ -n "$TOPIC_C" ] && PATHS+=(ingest-compressed)
: >"$RUNS"
settle_merges
for ((round = 1; round <= ROUNDS; round++)); do
  for ((k = 0; k < ${#PATHS[@]}; k++)); do
    path=${PATHS[(round - 1 + k) % ${#PATHS[@]}]}
    log "round ${round}/${ROUNDS}, path $((k + 1))/${#PATHS[@]}: ${path}"
    # The stack may have been restarted meanwhile (it is shared): whose CPU to read.
    CH_PID=$(service_pid clickhouse); KAFKA_PID=$(service_pid kafka)
    settle_merges
    case "$path" in
      ingest|ingest-empty|ingest-2p|ingest-4p|ingest-against|ingest-compressed) run_ingest "$path" "$round" $((k + 1)) ;;
      bare) run_bare "$round" $((k + 1)) ;;
      insert) run_insert "$round" $((k + 1)) ;;
      kafka-engine) run_kafka_engine "$round" $((k + 1)) ;;
    esac
  done
done

# ---------------------------------------------------------------- the CPU budget per stage (not timed)

# The in-process batch step of a build (bench/verify-inprocess.ts), short:
# the same loop size and payload as the topic. run_batch_step LABEL DIST
run_batch_step() {
  local label=$1 dist=$2 n=$((RECORDS < 100000 ? RECORDS : 100000))
  [ -f "$dist/bench/verify-inprocess.js" ] || { log "  ${label}: no bench/verify-inprocess.js in $dist: no batch step"; return 1; }
  log "  ${label}: the in-process batch step over $(fmt_int "$n") envelopes"
  node "$dist/bench/verify-inprocess.js" --only batch --rounds 1 --envelopes "$n" --loops $(( (n + PER_LOOP - 1) / PER_LOOP )) \
    --payload-bytes "$PAYLOAD_BYTES" --json >"$WORK/batch.${label}.json" 2>"$WORK/batch.${label}.log" || return 1
}

# One profiled ingest pass of a build over the topic: run_stages_pass LABEL CLI.
# Its own group and database; ClickHouse logs only its queries
# (ch_log_queries=1 rides in its URL; the User-Agent's application tag finds
# them). The process's CPU is read until it exits: its profiles cover its
# whole life, start-up and idle exit included.
run_stages_pass() {
  local label=$1 cli=$2
  local db="bench_${TS}_stages_${label}" group="bench.${TS}.stages.${label}"
  local dir="$WORK/stages.${label}" agent="agentledger-stages-${TS}-${label}" logf="$WORK/stages.${label}.log"
  DATABASES+=("$db"); GROUPS_MADE+=("$group")
  mkdir -p "$dir"
  local node_cmd=(node --cpu-prof --cpu-prof-dir="$dir")
  # shellcheck disable=SC2206 # the flags are words
  [ "$label" = against ] && [ -n "$AGAINST_NODE_FLAGS" ] && node_cmd+=($AGAINST_NODE_FLAGS)
  CH_PID=$(service_pid clickhouse); KAFKA_PID=$(service_pid kafka)
  settle_merges
  local snap=(node "$DIST/bench/e2e-stages.js" snapshot --ticks "$TICKS" --url "$CH_URL" --user "$CH_USER" --password "$CH_PASSWORD")
  [ -n "$CH_PID" ] && snap+=(--ch-pid "$CH_PID")
  [ -n "$KAFKA_PID" ] && snap+=(--kafka-pid "$KAFKA_PID")
  "${snap[@]}" >"$dir.before.json" || return 1
  local start pid cpu=0 c count=0 batch_env=()
  [ -n "$BATCH_ROWS" ] && batch_env=(AGENTLEDGER_BATCH_MAX_ROWS="$BATCH_ROWS")
  start=$(now_ns)
  env AGENTLEDGER_ENVELOPE_TOPIC="$TOPIC" AGENTLEDGER_DLQ_TOPIC="$DLQ" AGENTLEDGER_KAFKA_BROKERS="$BROKERS" \
    AGENTLEDGER_KAFKA_GROUP_ID="$group" AGENTLEDGER_CLICKHOUSE_DATABASE="$db" AGENTLEDGER_METRICS_PORT=0 "${batch_env[@]}" \
    AGENTLEDGER_CLICKHOUSE_URL="${CH_URL%/}/?ch_log_queries=1&application=${agent}" \
    "${node_cmd[@]}" "$cli" ingest --idle-exit-ms 5000 2>"$logf" &
  pid=$!
  # Each thread's CPU, until the process exits (JavaScript threads against V8's and node's helpers).
  node "$DIST/bench/e2e-stages.js" threads --pid "$pid" --ticks "$TICKS" >"$dir.threads.json" &
  local sampler=$!
  CHILD_PIDS=("$pid" "$sampler")
  while :; do
    sleep 1
    c=$(cpu_s "$pid"); alive "$pid" && cpu=$c
    count=$(ch "SELECT count() FROM envelopes" "$db" 2>/dev/null) || count=0
    if [ "${count:-0}" -ge "$RECORDS" ]; then "${snap[@]}" >"$dir.after.json" || return 1; break; fi
    if ! alive "$pid"; then log "  ${label}: the profiled ingest exited with ${count:-0} of $RECORDS rows stored; log: $logf"; return 1; fi
    if [ $(( ($(now_ns) - start) / 1000000000 )) -ge "$TIMEOUT_S" ]; then log "  ${label}: the profiled ingest stored only ${count:-0} rows in ${TIMEOUT_S} s"; return 1; fi
  done
  local waited=0
  while alive "$pid" && [ $waited -lt 300 ]; do c=$(cpu_s "$pid"); alive "$pid" && cpu=$c; sleep 0.2; waited=$((waited + 1)); done
  alive "$pid" && { log "  ${label}: the profiled ingest did not exit after idling; stopping it"; kill "$pid"; }
  wait "$pid" || log "  ${label}: the profiled ingest exited with $?; log: $logf"
  wait "$sampler" || log "  ${label}: its threads' CPU could not be read"
  CHILD_PIDS=()
  local collect=(node "$DIST/bench/e2e-stages.js" collect --label "$label" --ticks "$TICKS" --url "$CH_URL" --user "$CH_USER" --password "$CH_PASSWORD"
    --before "$dir.before.json" --after "$dir.after.json" --profiles "$dir" --process-cpu "$cpu" --envelopes "$RECORDS" --agent "$agent" --database "$db")
  [ -s "$WORK/batch.${label}.json" ] && collect+=(--batch "$WORK/batch.${label}.json")
  [ -s "$dir.threads.json" ] && collect+=(--threads "$dir.threads.json")
  "${collect[@]}" >"$WORK/stages.${label}.json" || return 1
  drop_database "$db"
  log "  ${label}: profiled pass $(awk -v ns=$(( $(now_ns) - start )) 'BEGIN { printf "%.1f", ns / 1e9 }') s, CPU $(per_env "$cpu") µs/envelope, $(find "$dir" -name '*.cpuprofile' | wc -l) profile(s)"
}

STAGE_FILES=()
if [ "$STAGES" = 1 ]; then
  log "CPU budget per stage: the in-process batch step and one profiled ingest pass per build (not timed)"
  run_batch_step main "$DIST" || log "warning: the batch step of this build failed; log: $WORK/batch.main.log"
  if run_stages_pass main "$CLI"; then STAGE_FILES+=(--stages "$WORK/stages.main.json"); else log "warning: no CPU budget per stage for this build"; fi
  if [ -n "$AGAINST" ]; then
    run_batch_step against "$AGAINST" || log "warning: the batch step of the --against build failed; log: $WORK/batch.against.log"
    if run_stages_pass against "$AGAINST/bench/e2e-cli.js"; then STAGE_FILES+=(--stages-against "$WORK/stages.against.json"); else log "warning: no CPU budget per stage for the --against build"; fi
  fi
fi

# ---------------------------------------------------------------- report

cat >"$WORK/meta.json" <<EOF
{"date":"$(date -u +%Y-%m-%dT%H:%M:%SZ)","topic":"${TOPIC}","partitions":4,"envelopes":${RECORDS},"loops":${LOOPS},"perLoop":${PER_LOOP},
 "payloadBytes":${PAYLOAD_BYTES},"produceSeconds":${PRODUCE_S},"rounds":${ROUNDS},"prefill":${PREFILL},"insertFormat":"${INSERT_FORMAT}",
 "insertRows":${INSERT_ROWS},"batchRows":"${BATCH_ROWS}","profile":"${PROFILE_DIR}","clickhouseVersion":"${CH_VERSION}","kafkaEngineConsumers":1,"against":"${AGAINST}","againstNodeFlags":"${AGAINST_NODE_FLAGS}","compression":"${COMPRESSION}"}
EOF
echo
report_args=(--meta "$WORK/meta.json" --runs "$RUNS" "${STAGE_FILES[@]}")
[ -n "$JSON_OUT" ] && report_args+=(--json "$JSON_OUT")
[ "$GATE" = 1 ] || report_args+=(--no-gate)
report_rc=0
node "$DIST/bench/e2e-report.js" "${report_args[@]}" || report_rc=$?
[ "$report_rc" -gt 1 ] || REPORTED=1
exit "$report_rc"
