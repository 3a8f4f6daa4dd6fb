#!/usr/bin/env bash
# Local service stack for agentledger without a Docker engine:
# Kafka (KRaft, jars from Maven Central), ClickHouse (Debian) and Redis (Debian).
# Run `infra/stack.sh --help` for the subcommands.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
INFRA="$ROOT/infra"
STATE="$ROOT/.state"
LIBS="$STATE/kafka-libs"
KAFKA_DIR="$STATE/kafka"
CH_DIR="$STATE/clickhouse"
REDIS_DIR="$STATE/redis"

KAFKA_PID="$KAFKA_DIR/kafka.pid"
KAFKA_LOG="$KAFKA_DIR/kafka.log"
KAFKA_OUT="$KAFKA_DIR/kafka.out"
CH_PID="$CH_DIR/clickhouse.pid"
CH_LOG="$CH_DIR/log/clickhouse-server.log"
CH_ERRLOG="$CH_DIR/log/clickhouse-server.err.log"
CH_OUT="$CH_DIR/log/stdout.log"
REDIS_PID="$REDIS_DIR/redis.pid"
REDIS_LOG="$REDIS_DIR/redis.log"

# The PLAINTEXT listener of infra/kafka/server.properties.in.
KAFKA_ADDR=127.0.0.1:9092
CH_HTTP=http://127.0.0.1:8123
# The database agentledger is configured to use (src/config: same variable, same default).
CH_DATABASE="${AGENTLEDGER_CLICKHOUSE_DATABASE:-agentledger}"
REDIS_PORT=6379
# Where Debian's chromium-headless-shell puts the browser (/usr/bin/chromium-headless-shell
# is a shell script that execs it); test/support/browser.ts looks here too.
CHROMIUM=/usr/lib/chromium/chromium-headless-shell

# Credentials: the same variables agentledger reads (src/config), same defaults,
# so one environment configures the stack and the app. Fixed demo values are
# fine here: every service listens on loopback only.
CH_PASSWORD="${AGENTLEDGER_CLICKHOUSE_PASSWORD:-agentledger}"
CH_MIGRATOR_PASSWORD="${AGENTLEDGER_CLICKHOUSE_MIGRATOR_PASSWORD:-agentledger_migrator}"
CH_DASHBOARD_PASSWORD="${AGENTLEDGER_CLICKHOUSE_DASHBOARD_PASSWORD:-agentledger_dashboard}"
REDIS_USER=agentledger
REDIS_PASSWORD="${AGENTLEDGER_REDIS_PASSWORD:-agentledger}"
# BullMQ's ACL: every key (the queue prefix is configurable), no @dangerous
# command (FLUSHALL, KEYS, CONFIG SET, ACL, SHUTDOWN, DEBUG, MONITOR…) except
# INFO (BullMQ and ioredis read the server version) and CONFIG GET (doctor
# reads appendonly).
REDIS_ACL_RULES="~* +@all -@dangerous +info +config|get"

KAFKA_TIMEOUT="${STACK_KAFKA_TIMEOUT:-90}"
CH_TIMEOUT="${STACK_CLICKHOUSE_TIMEOUT:-60}"
REDIS_TIMEOUT="${STACK_REDIS_TIMEOUT:-20}"
STOP_TIMEOUT=30

log() { echo "[stack] $*"; }
warn() { echo "[stack] WARNING: $*" >&2; }
die() { echo "[stack] ERROR: $*" >&2; exit 1; }

usage() {
  cat <<EOF
Usage: infra/stack.sh COMMAND [ARGS] [--cluster]

Runs the agentledger service stack on this machine without Docker. Everything
lives under .state/ in the repo root ($STATE); configs are generated
there from the templates in infra/.

  install           Idempotent. apt-get installs clickhouse-server, clickhouse-client
                    and redis-server if missing, and chromium-headless-shell with
                    fonts-liberation (without Recommends) for the browser tests
                    (test/support/browser.ts); checks Java (17+); resolves the
                    Kafka broker jars from infra/kafka/pom.xml into .state/kafka-libs
                    with Maven (again whenever the pom's sha256 changes).
  up                install, then start whatever is not running and wait until
                    each service answers. Services already up are left alone.
  down [--purge]    Stop what this script started (SIGTERM, SIGKILL after ${STOP_TIMEOUT}s).
                    Data is kept; --purge also deletes .state/{kafka,clickhouse,redis,prometheus,alertmanager}
                    (not the jars). A reused Redis is never stopped.
  status            One line per service: up/down, pid, address, version.
                    Exit code 0 if all are up, 3 otherwise.
  start SERVICE     Start one service (kafka|clickhouse|redis|prometheus|alertmanager) and wait for it.
  stop SERVICE      Stop one service.
  restart SERVICE   stop + start (used by integration tests).
  up|down|status --cluster
                    The same for the local cluster instead (infra/cluster.sh):
                    ZooKeeper, three Kafka brokers and four ClickHouse servers
                    (two shards of two replicas), ports and folders apart from
                    the services below, so both run at once. 'down --cluster
                    --purge' deletes .state/cluster; 'up --cluster' writes
                    infra/cluster.env (set -a; . infra/cluster.env; set +a).
  --help            This text.

Services (same ports and credentials as docker-compose.yml):
  kafka       PLAINTEXT $KAFKA_ADDR (controller 127.0.0.1:9093), single-node KRaft
              broker+controller, node.id=1, auto.create.topics.enable=false,
              num.partitions=4. Runs 'java -cp .state/kafka-libs/* kafka.Kafka'.
              Config: infra/kafka/server.properties.in -> .state/kafka/server.properties,
              data .state/kafka/data, log .state/kafka/kafka.log (+ kafka.out for
              JVM output), cluster id in .state/kafka/cluster.id.
  clickhouse  HTTP 127.0.0.1:8123, native 127.0.0.1:9000. Database
              '$CH_DATABASE' (AGENTLEDGER_CLICKHOUSE_DATABASE, default agentledger)
              is created. Users, all loopback only:
                agentledger            writer: INSERT/SELECT on the database, no DDL
                                       (password AGENTLEDGER_CLICKHOUSE_PASSWORD, default agentledger)
                agentledger_migrator   + DDL on the database (AGENTLEDGER_CLICKHOUSE_MIGRATOR_PASSWORD,
                                       default agentledger_migrator)
                agentledger_dashboard  readonly=1 on the database (AGENTLEDGER_CLICKHOUSE_DASHBOARD_PASSWORD,
                                       default agentledger_dashboard)
                agentledger_test       all databases, for the integration tests (agentledger_test)
                default                no password, the stack's admin
              Config: infra/clickhouse/{config.xml.in,users.xml,users.d/agentledger.xml}
              -> .state/clickhouse/etc/ (users are rewritten on every up/start;
              ClickHouse reloads them by itself), data .state/clickhouse/data,
              logs .state/clickhouse/log/.
  redis       127.0.0.1:6379, appendonly yes (everysec). ACL: user agentledger
              (password AGENTLEDGER_REDIS_PASSWORD, default agentledger) for BullMQ;
              user default is off, so an unauthenticated command gets NOAUTH.
              Config: infra/redis/redis.conf.in -> .state/redis/redis.conf.
              If another Redis already answers on 6379 it is reused and never
              stopped: the agentledger user is added to it (ACL SETUP) and
              appendonly set, but its own users are left as they are.
  prometheus  127.0.0.1:9090 (Debian's prometheus), --web.enable-lifecycle, for the
              tests: scrapes and evaluates every 1 s (not a production interval),
              loads infra/prometheus/agentledger-rules.yml, sends alerts to
              127.0.0.1:9193, and scrapes jobs agentledger-{ingest,worker,serve}
              from the file_sd files .state/prometheus/targets/{ingest,worker,serve}-*.json
              (tests write their own). Config generated into .state/prometheus/
              (infra/prometheus/service.sh) and reloaded on every start; data
              .state/prometheus/data (kept a day), log .state/prometheus/prometheus.log.
  alertmanager  127.0.0.1:9193 (Debian prometheus-alertmanager), HA clustering
              off, config infra/alertmanager/alertmanager.yml (checked with amtool
              first), data .state/alertmanager/data, log .state/alertmanager/alertmanager.log.

Cluster (--cluster; everything in .state/cluster/<service>/, 127.0.0.1 only):
  zookeeper        2191 (ZooKeeper 3.8, jars from infra/zookeeper/pom.xml into
                   .state/zookeeper-libs), for ClickHouse's replicas and ON CLUSTER DDL
  kafka-1..3       PLAINTEXT 19092..19094, controllers 19192..19194: KRaft, each
                   broker+controller, RF 3, min ISR 2 (infra/kafka/cluster.properties.in)
  clickhouse-1..4  HTTP 18123..18126, native 19000..19003, interserver 19009..19012;
                   cluster 'agentledger' in remote_servers: shard 1 = servers 1, 2,
                   shard 2 = servers 3, 4; the same users and database as above

Timeouts (seconds) can be raised with STACK_KAFKA_TIMEOUT (${KAFKA_TIMEOUT}),
STACK_CLICKHOUSE_TIMEOUT (${CH_TIMEOUT}), STACK_REDIS_TIMEOUT (${REDIS_TIMEOUT}),
STACK_PROMETHEUS_TIMEOUT (60), STACK_ZOOKEEPER_TIMEOUT (60).
EOF
}

# ---------------------------------------------------------------- helpers

as_root() {
  if [[ $EUID -eq 0 ]]; then "$@"
  elif command -v sudo >/dev/null; then sudo "$@"
  else die "need root (or sudo) to run: $*"; fi
}

# pid_of PIDFILE PATTERN: prints the pid if the process lives and its command
# line contains PATTERN, the program's name (guards against stale pid files
# and pid reuse; the pid file is this checkout's, and a worktree whose .state
# links here started its services under another path).
pid_of() {
  local pid cmd
  [[ -f $1 ]] || return 1
  pid="$(tr -dc '0-9' <"$1")"
  [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 1
  if [[ -r /proc/$pid/cmdline ]]; then
    cmd="$(tr '\0' ' ' <"/proc/$pid/cmdline")"
    [[ $cmd == *"$2"* ]] || return 1
  fi
  echo "$pid"
}

# stop_pid NAME PIDFILE PATTERN
stop_pid() {
  local name=$1 file=$2 pat=$3 pid i
  if ! pid="$(pid_of "$file" "$pat")"; then
    rm -f "$file"
    return 1
  fi
  log "$name: stopping pid $pid (SIGTERM)…"
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < STOP_TIMEOUT * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    warn "$name: pid $pid still alive after ${STOP_TIMEOUT}s, sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    sleep 0.5
  fi
  rm -f "$file"
  log "$name: stopped"
}

# wait_until NAME TIMEOUT CHECK_FN PID LOGFILE...: poll CHECK_FN; fail early if PID dies.
wait_until() {
  local name=$1 timeout=$2 check=$3 pid=$4; shift 4
  local start=$SECONDS f
  while ! "$check"; do
    if [[ -n $pid ]] && ! kill -0 "$pid" 2>/dev/null; then
      for f in "$@"; do
        [[ -s $f ]] && { echo "----- last lines of $f" >&2; tail -n 20 "$f" >&2; }
      done
      die "$name exited during startup; see $*"
    fi
    if ((SECONDS - start >= timeout)); then
      die "$name did not answer within ${timeout}s; see $* (raise the timeout with STACK_$(tr '[:lower:]' '[:upper:]' <<<"$name")_TIMEOUT)"
    fi
    sleep 0.3
  done
}

kafka_version() {
  local jar
  jar="$(ls "$LIBS"/kafka_2.13-*.jar 2>/dev/null | head -n 1)" || true
  [[ -n $jar ]] || { echo "?"; return; }
  jar="${jar##*/kafka_2.13-}"
  echo "${jar%.jar}"
}

kafka_java() {
  java -Dlog4j2.configurationFile="$INFRA/kafka/log4j2.xml" -Dkafka.log.file="$KAFKA_LOG" \
    -cp "$LIBS/*" "$@"
}

# ---------------------------------------------------------------- install

cmd_install() {
  # Everything the stack needs from Debian; a fresh machine of this kind has Java
  # and Maven, but nothing here relies on that.
  local missing=()
  command -v clickhouse-server >/dev/null || missing+=(clickhouse-server)
  command -v clickhouse-client >/dev/null || missing+=(clickhouse-client)
  command -v redis-server >/dev/null && command -v redis-cli >/dev/null || missing+=(redis-server redis-tools)
  command -v java >/dev/null || missing+=(openjdk-17-jre-headless)
  command -v mvn >/dev/null || missing+=(maven)
  command -v curl >/dev/null || missing+=(curl)
  log "checking Debian packages (clickhouse-server, redis-server, java, maven, curl)…"
  if ((${#missing[@]} == 0)); then
    log "  already installed"
  else
    log "installing Debian packages: ${missing[*]}…"
    as_root apt-get update -q
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
  fi

  # The headless browser of the browser tests (test/support/browser.ts runs
  # /usr/lib/chromium/chromium-headless-shell). Without Recommends: through
  # chromium-common they would bring systemd, udev, avahi-daemon, CUPS and GTK
  # (129 packages instead of 18). fonts-liberation is the one Recommend kept:
  # metric-compatible Arial/Times/Courier, so pages lay out as they would elsewhere.
  local browser=()
  [[ -x $CHROMIUM ]] || browser+=(chromium-headless-shell)
  [[ -d /usr/share/fonts/truetype/liberation ]] || browser+=(fonts-liberation)
  log "checking Debian packages for the browser tests (chromium-headless-shell, fonts-liberation)…"
  if ((${#browser[@]} == 0)); then
    log "  already installed ($("$CHROMIUM" --version 2>/dev/null || echo "$CHROMIUM"))"
  else
    log "installing Debian packages without Recommends: ${browser[*]}…"
    ((${#missing[@]} > 0)) || as_root apt-get update -q
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${browser[@]}"
    log "  $("$CHROMIUM" --version)"
  fi

  # Prometheus's tools for the monitoring tests (promtool: check metrics,
  # check and test rules, infra/prometheus/; amtool), without Recommends:
  # the services themselves are not started by the package here.
  local monitoring=()
  command -v promtool >/dev/null || monitoring+=(prometheus)
  command -v amtool >/dev/null || monitoring+=(prometheus-alertmanager)
  log "checking Debian packages for the monitoring tests (prometheus, prometheus-alertmanager)…"
  if ((${#monitoring[@]} == 0)); then
    log "  already installed ($(promtool --version 2>&1 | head -1))"
  else
    log "installing Debian packages without Recommends: ${monitoring[*]}…"
    ((${#missing[@]} + ${#browser[@]} > 0)) || as_root apt-get update -q
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${monitoring[@]}"
  fi

  log "checking Java…"
  command -v java >/dev/null || die "java not found; Kafka $(kafka_version) needs Java 17+ (apt-get install openjdk-17-jre-headless)"
  local jv
  jv="$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1)"
  [[ -n $jv && $jv -ge 17 ]] || die "Java 17+ required for the Kafka broker, found: $(java -version 2>&1 | head -n 1)"
  log "  java $jv"

  log "checking Kafka broker jars in .state/kafka-libs…"
  maven_jars Kafka "$INFRA/kafka/pom.xml" "$LIBS" 'kafka_2.13-*.jar' "$STATE/mvn.log" kafka_version
}

# maven_jars NAME POM DIR GLOB LOG VERSION_FN: the runtime jars of POM in DIR,
# resolved by Maven again only when POM changed (its sha256 is kept in DIR) or
# no jar matches GLOB; VERSION_FN prints the version found.
maven_jars() {
  local name=$1 pom=$2 dir=$3 glob=$4 mvn_log=$5 version=$6 sum
  sum="$(sha256sum "$pom" | cut -d' ' -f1)"
  if [[ -f $dir/.pom.sha256 && "$(cat "$dir/.pom.sha256")" == "$sum" ]] && compgen -G "$dir/$glob" >/dev/null; then
    log "  up to date ($name $($version))"
    return
  fi
  command -v mvn >/dev/null || die "mvn not found; needed once to fetch the $name jars (apt-get install maven)"
  log "resolving $name jars with Maven (${pom#"$ROOT"/})…"
  rm -rf "$dir"
  mkdir -p "$dir"
  mvn -q -B -f "$pom" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$dir" \
    >"$mvn_log" 2>&1 || { tail -n 30 "$mvn_log" >&2; die "mvn failed; see $mvn_log"; }
  echo "$sum" >"$dir/.pom.sha256"
  log "  $name $($version): $(ls "$dir"/*.jar | wc -l) jars"
}

# ---------------------------------------------------------------- kafka

# A real request: ApiVersions v0 on $KAFKA_ADDR must come back with error_code 0.
# The broker only enables request processing on its listener once it is unfenced.
kafka_is_up() {
  local out
  out="$(timeout 3 bash -c '
    exec 3<>"/dev/tcp/${1%:*}/${1##*:}" || exit 1
    printf "\x00\x00\x00\x0f\x00\x12\x00\x00\x00\x00\x00\x2a\x00\x05stack" >&3
    head -c 10 <&3 | od -An -tx1' kafka_is_up "$KAFKA_ADDR" 2>/dev/null)" || return 1
  out="$(echo $out)"
  [[ ${out:12} == "00 00 00 2a 00 00" ]]
}

kafka_start() {
  if kafka_is_up; then
    local pid
    if pid="$(pid_of "$KAFKA_PID" kafka.Kafka)"; then
      log "kafka: already up (pid $pid, $KAFKA_ADDR)"
    else
      log "kafka: already up on $KAFKA_ADDR (not started by this script; left alone)"
    fi
    return 0
  fi
  if pid_of "$KAFKA_PID" kafka.Kafka >/dev/null; then
    log "kafka: process running but not answering yet, waiting…"
    wait_until kafka "$KAFKA_TIMEOUT" kafka_is_up "$(cat "$KAFKA_PID")" "$KAFKA_LOG" "$KAFKA_OUT"
    log "kafka: up"
    return 0
  fi
  ls "$LIBS"/kafka_2.13-*.jar >/dev/null 2>&1 || die "no Kafka jars in $LIBS; run infra/stack.sh install"

  mkdir -p "$KAFKA_DIR/data"
  sed "s#@DATA_DIR@#$KAFKA_DIR/data#g" "$INFRA/kafka/server.properties.in" >"$KAFKA_DIR/server.properties"
  if [[ ! -s $KAFKA_DIR/cluster.id ]]; then
    kafka_java kafka.tools.StorageTool random-uuid | tail -n 1 >"$KAFKA_DIR/cluster.id.tmp"
    mv "$KAFKA_DIR/cluster.id.tmp" "$KAFKA_DIR/cluster.id"
  fi
  if [[ ! -f $KAFKA_DIR/data/meta.properties ]]; then
    log "kafka: formatting storage (cluster id $(cat "$KAFKA_DIR/cluster.id"))…"
    kafka_java kafka.tools.StorageTool format -t "$(cat "$KAFKA_DIR/cluster.id")" \
      -c "$KAFKA_DIR/server.properties" >>"$KAFKA_OUT" 2>&1 \
      || { tail -n 20 "$KAFKA_OUT" >&2; die "kafka: storage format failed; see $KAFKA_OUT"; }
  fi

  log "kafka: starting Kafka $(kafka_version) on $KAFKA_ADDR…"
  # setsid: own session, so a test runner killing our process group leaves it alone.
  setsid nohup java -Xms512m -Xmx1g -Djava.awt.headless=true \
    -Dlog4j2.configurationFile="$INFRA/kafka/log4j2.xml" -Dkafka.log.file="$KAFKA_LOG" \
    -cp "$LIBS/*" kafka.Kafka "$KAFKA_DIR/server.properties" \
    </dev/null >>"$KAFKA_OUT" 2>&1 &
  local pid=$!
  echo "$pid" >"$KAFKA_PID"
  wait_until kafka "$KAFKA_TIMEOUT" kafka_is_up "$pid" "$KAFKA_LOG" "$KAFKA_OUT"
  log "kafka: up (pid $pid)"
}

kafka_stop() {
  stop_pid kafka "$KAFKA_PID" kafka.Kafka && return 0
  if kafka_is_up; then log "kafka: up on $KAFKA_ADDR but not started by this script; left alone"
  else log "kafka: not running"; fi
}

kafka_status() {
  local pid="-" state=down
  kafka_is_up && state=up
  pid="$(pid_of "$KAFKA_PID" kafka.Kafka)" || pid="-"
  printf '%-11s %-5s pid %-8s %-22s %s\n' kafka "$state" "$pid" "$KAFKA_ADDR" "Kafka $(kafka_version) (KRaft)"
  [[ $state == up ]]
}

# ---------------------------------------------------------------- clickhouse

ch_query() { curl -sS --fail --max-time 10 --data-binary "$1" "$CH_HTTP/"; }

clickhouse_is_up() {
  [[ "$(curl -s --max-time 2 "$CH_HTTP/ping" 2>/dev/null)" == "Ok." ]] \
    && [[ "$(ch_query 'SELECT 1' 2>/dev/null)" == 1 ]]
}

# xml_escape TEXT: TEXT as XML character data.
xml_escape() {
  # Quoted replacements: bash 5.2 reads an unquoted & there as the match.
  local s=${1//&/"&amp;"}
  s=${s//</"&lt;"}
  s=${s//>/"&gt;"}
  printf '%s' "$s"
}

# The users.d file with every `<X from_env="VAR"/>` replaced by <X>value</X>:
# values are written in, so the running server needs none of the variables
# (and picks a change up on its own, without a restart).
render_users() {
  local text var value
  text="$(<"$INFRA/clickhouse/users.d/agentledger.xml")"
  for var in AGENTLEDGER_CLICKHOUSE_PASSWORD AGENTLEDGER_CLICKHOUSE_MIGRATOR_PASSWORD \
    AGENTLEDGER_CLICKHOUSE_DASHBOARD_PASSWORD AGENTLEDGER_CLICKHOUSE_DATABASE; do
    case $var in
      AGENTLEDGER_CLICKHOUSE_PASSWORD) value=$CH_PASSWORD ;;
      AGENTLEDGER_CLICKHOUSE_MIGRATOR_PASSWORD) value=$CH_MIGRATOR_PASSWORD ;;
      AGENTLEDGER_CLICKHOUSE_DASHBOARD_PASSWORD) value=$CH_DASHBOARD_PASSWORD ;;
      AGENTLEDGER_CLICKHOUSE_DATABASE) value=$CH_DATABASE ;;
    esac
    value="$(xml_escape "$value")"
    text="${text//"<password from_env=\"$var\"/>"/"<password>$value</password>"}"
    text="${text//"<database from_env=\"$var\"/>"/"<database>$value</database>"}"
  done
  local left='<[A-Za-z_]+ from_env='
  [[ ! $text =~ $left ]] || die "infra/clickhouse/users.d/agentledger.xml: a from_env element render_users does not know"
  printf '%s\n' "$text"
}

# Writes the users files next to the config. Through a temporary file and a
# rename, so the server never reloads a half-written file.
clickhouse_users() {
  mkdir -p "$CH_DIR/etc/users.d"
  cp "$INFRA/clickhouse/users.xml" "$CH_DIR/etc/users.xml.tmp"
  mv "$CH_DIR/etc/users.xml.tmp" "$CH_DIR/etc/users.xml"
  rm -f "$CH_DIR/etc/users.d/agentledger.xml.tmp"
  (umask 077 && render_users >"$CH_DIR/etc/users.d/agentledger.xml.tmp")
  mv "$CH_DIR/etc/users.d/agentledger.xml.tmp" "$CH_DIR/etc/users.d/agentledger.xml"
}

clickhouse_init_db() {
  # The name goes into SQL text: only what agentledger's config accepts.
  [[ $CH_DATABASE =~ ^[A-Za-z_][A-Za-z0-9_]{0,127}$ ]] \
    || die "AGENTLEDGER_CLICKHOUSE_DATABASE='$CH_DATABASE' is not a database name (letters, digits, _)"
  ch_query "CREATE DATABASE IF NOT EXISTS \`$CH_DATABASE\`" >/dev/null \
    || die "clickhouse: CREATE DATABASE $CH_DATABASE failed; see $CH_ERRLOG"
}

clickhouse_start() {
  if clickhouse_is_up; then
    local pid
    if pid="$(pid_of "$CH_PID" clickhouse-server)"; then
      clickhouse_users
      log "clickhouse: already up (pid $pid, $CH_HTTP); users rewritten from infra/clickhouse"
    else
      log "clickhouse: already up on $CH_HTTP (not started by this script; left alone)"
    fi
    clickhouse_init_db
    return 0
  fi
  command -v clickhouse-server >/dev/null || die "clickhouse-server not installed; run infra/stack.sh install"
  if pid_of "$CH_PID" clickhouse-server >/dev/null; then
    log "clickhouse: process running but not answering yet, waiting…"
    wait_until clickhouse "$CH_TIMEOUT" clickhouse_is_up "$(cat "$CH_PID")" "$CH_ERRLOG" "$CH_LOG" "$CH_OUT"
  else
    mkdir -p "$CH_DIR"/{etc,data,tmp,user_files,format_schemas,log}
    # 18.16 wants absolute paths: render the template; users.xml sits next to it.
    sed "s#@STATE@#$CH_DIR#g" "$INFRA/clickhouse/config.xml.in" >"$CH_DIR/etc/config.xml"
    clickhouse_users
    log "clickhouse: starting $CH_HTTP (native 127.0.0.1:9000)…"
    # Foreground mode in the background (18.16 ignores --pid-file without --daemon,
    # and this way we know the pid at once and notice an early exit).
    setsid nohup clickhouse-server --config-file="$CH_DIR/etc/config.xml" \
      </dev/null >>"$CH_OUT" 2>&1 &
    local pid=$!
    echo "$pid" >"$CH_PID"
    wait_until clickhouse "$CH_TIMEOUT" clickhouse_is_up "$pid" "$CH_ERRLOG" "$CH_LOG" "$CH_OUT"
  fi
  clickhouse_init_db
  log "clickhouse: up (pid $(cat "$CH_PID")), database $CH_DATABASE ready"
}

clickhouse_stop() {
  stop_pid clickhouse "$CH_PID" clickhouse-server && return 0
  if clickhouse_is_up; then log "clickhouse: up on $CH_HTTP but not started by this script; left alone"
  else log "clickhouse: not running"; fi
}

clickhouse_status() {
  local pid state=down ver="-"
  if clickhouse_is_up; then state=up; ver="ClickHouse $(ch_query 'SELECT version()' 2>/dev/null || echo '?')"; fi
  pid="$(pid_of "$CH_PID" clickhouse-server)" || pid="-"
  printf '%-11s %-5s pid %-8s %-22s %s\n' clickhouse "$state" "$pid" "127.0.0.1:8123/9000" "$ver"
  [[ $state == up ]]
}

# ---------------------------------------------------------------- redis

# rcli: as agentledger's ACL user (the password through the environment, not argv).
rcli() { REDISCLI_AUTH="$REDIS_PASSWORD" timeout 5 redis-cli --no-auth-warning --user "$REDIS_USER" -h 127.0.0.1 -p "$REDIS_PORT" "$@"; }
# rcli_anon: without credentials, as any client that knows no password.
rcli_anon() { timeout 5 redis-cli -h 127.0.0.1 -p "$REDIS_PORT" "$@"; }

# Something speaks Redis on the port, whether it lets us in or not.
redis_answers() {
  local reply
  reply="$(rcli_anon PING 2>&1)" || return 1
  [[ $reply == PONG || $reply == *NOAUTH* ]]
}

# The stack's user gets in.
redis_is_up() { [[ "$(rcli ACL WHOAMI 2>/dev/null)" == "$REDIS_USER" ]]; }

redis_ours() { pid_of "$REDIS_PID" redis-server; }

# redis_quote WORD: WORD as one argument of a redis.conf line (sdssplitargs).
redis_quote() {
  local s=${1//\\/\\\\}
  s=${s//\"/\\\"}
  printf '"%s"' "$s"
}

redis_render_conf() {
  local text
  text="$(<"$INFRA/redis/redis.conf.in")"
  text="${text//@STATE@/"$REDIS_DIR"}"
  text="${text//@ACL_USER@/"user $REDIS_USER on $(redis_quote ">$REDIS_PASSWORD") $REDIS_ACL_RULES"}"
  printf '%s\n' "$text"
}

# A Redis this script did not start: add agentledger's user (the app's default
# config needs it) and persistence, but leave its other users, `default`
# included, as they are: other programs may rely on them.
redis_adopt() {
  log "redis: reusing the Redis already answering on 127.0.0.1:$REDIS_PORT (not managed by this script)"
  if redis_is_up; then
    log "redis: user $REDIS_USER already gets in"
  elif [[ "$(rcli_anon ACL SETUSER "$REDIS_USER" reset on ">$REDIS_PASSWORD" $REDIS_ACL_RULES 2>&1)" == OK ]]; then
    log "redis: ACL SETUSER $REDIS_USER -> OK"
  else
    warn "redis: could not add ACL user $REDIS_USER to the reused Redis; give it that user (password AGENTLEDGER_REDIS_PASSWORD) or stop it and run infra/stack.sh start redis"
  fi
  if [[ "$(rcli_anon CONFIG SET appendonly yes 2>&1)" == OK ]]; then
    log "redis: CONFIG SET appendonly yes -> OK"
  else
    warn "redis: CONFIG SET appendonly yes failed on the reused Redis; its data may not survive a restart"
  fi
  [[ "$(rcli_anon PING 2>&1)" != PONG ]] \
    || warn "redis: the reused Redis still answers unauthenticated commands (its default user is not ours to lock)"
}

redis_start() {
  if redis_answers; then
    local pid
    if pid="$(redis_ours)"; then
      if redis_is_up; then log "redis: already up (pid $pid, 127.0.0.1:$REDIS_PORT)"
      else warn "redis: pid $pid runs an older config without user $REDIS_USER (or another password); run infra/stack.sh restart redis"; fi
    else
      redis_adopt
    fi
    return 0
  fi
  command -v redis-server >/dev/null || die "redis-server not installed; run infra/stack.sh install"
  mkdir -p "$REDIS_DIR"
  # The file holds the password: readable by its owner only.
  rm -f "$REDIS_DIR/redis.conf.tmp"
  (umask 077 && redis_render_conf >"$REDIS_DIR/redis.conf.tmp")
  mv "$REDIS_DIR/redis.conf.tmp" "$REDIS_DIR/redis.conf"
  rm -f "$REDIS_PID"
  log "redis: starting 127.0.0.1:$REDIS_PORT…"
  redis-server "$REDIS_DIR/redis.conf" </dev/null >>"$REDIS_LOG" 2>&1 \
    || { tail -n 20 "$REDIS_LOG" >&2; die "redis: redis-server failed to start; see $REDIS_LOG"; }
  wait_until redis "$REDIS_TIMEOUT" redis_is_up "" "$REDIS_LOG"
  log "redis: up (pid $(redis_ours || echo '?')), user $REDIS_USER"
}

redis_stop() {
  stop_pid redis "$REDIS_PID" redis-server && return 0
  if redis_answers; then log "redis: up on 127.0.0.1:$REDIS_PORT but not started by this script (reused); left alone"
  else log "redis: not running"; fi
}

redis_status() {
  local pid state=down ver="-"
  if redis_is_up; then
    state=up
    ver="Redis $(rcli INFO server 2>/dev/null | tr -d '\r' | sed -n 's/^redis_version://p')"
    if pid="$(redis_ours)"; then :; else
      pid="$(rcli INFO server 2>/dev/null | tr -d '\r' | sed -n 's/^process_id://p')"
      ver="$ver (reused)"
    fi
  else
    pid="$(redis_ours)" || pid="-"
    redis_answers && ver="answers, but user $REDIS_USER cannot log in (infra/stack.sh restart redis)"
  fi
  printf '%-11s %-5s pid %-8s %-22s %s\n' redis "$state" "$pid" "127.0.0.1:$REDIS_PORT" "$ver"
  [[ $state == up ]]
}

# ---------------------------------------------------------------- prometheus

# shellcheck source=infra/prometheus/service.sh
. "$INFRA/prometheus/service.sh"

# ---------------------------------------------------------------- alertmanager
# Prometheus's Alertmanager (Debian prometheus-alertmanager 0.25, installed by
# cmd_install), for agentledger's alerts (docs/alerts.md "Alertmanager"):
# 127.0.0.1:9193 (9093 is Kafka's controller), HA clustering off, data (its
# silences and notification log; alerts are not kept, senders re-send them)
# in .state/alertmanager, config infra/alertmanager/alertmanager.yml.
AM_DIR="$STATE/alertmanager"
AM_PID="$AM_DIR/alertmanager.pid"
AM_LOG="$AM_DIR/alertmanager.log"
AM_ADDR=127.0.0.1:9193
AM_TIMEOUT="${STACK_ALERTMANAGER_TIMEOUT:-20}"

alertmanager_is_up() { curl -fsS -m 2 "http://$AM_ADDR/-/ready" >/dev/null 2>&1; }
alertmanager_ours() { pid_of "$AM_PID" prometheus-alertmanager; }

alertmanager_start() {
  local pid
  if pid="$(alertmanager_ours)"; then log "alertmanager: already up (pid $pid, $AM_ADDR)"; return 0; fi
  alertmanager_is_up && die "alertmanager: something not started by this script answers on $AM_ADDR"
  command -v prometheus-alertmanager >/dev/null || die "prometheus-alertmanager not installed; run infra/stack.sh install"
  amtool check-config "$INFRA/alertmanager/alertmanager.yml" >/dev/null || die "alertmanager: amtool check-config infra/alertmanager/alertmanager.yml failed"
  mkdir -p "$AM_DIR/data"
  log "alertmanager: starting $AM_ADDR…"
  setsid prometheus-alertmanager --config.file="$INFRA/alertmanager/alertmanager.yml" --storage.path="$AM_DIR/data" \
    --web.listen-address="$AM_ADDR" --cluster.listen-address= </dev/null >>"$AM_LOG" 2>&1 &
  echo $! >"$AM_PID"
  wait_until alertmanager "$AM_TIMEOUT" alertmanager_is_up "$!" "$AM_LOG"
  log "alertmanager: up (pid $(alertmanager_ours || echo '?'))"
}

alertmanager_stop() {
  stop_pid alertmanager "$AM_PID" prometheus-alertmanager && return 0
  log "alertmanager: not running"
}

alertmanager_status() {
  local state=down pid=- ver=""
  if alertmanager_is_up; then
    state=up
    ver="Alertmanager $(curl -fsS -m 2 "http://$AM_ADDR/api/v2/status" 2>/dev/null | sed -n 's/.*"version":"\([^"]*\)".*/\1/p')"
  fi
  pid="$(alertmanager_ours)" || pid="-"
  printf '%-11s %-5s pid %-8s %-22s %s\n' alertmanager "$state" "$pid" "$AM_ADDR" "$ver"
  [[ $state == up ]]
}

# ---------------------------------------------------------------- commands

check_service() {
  case "${1:-}" in
    kafka | clickhouse | redis | prometheus | alertmanager) ;;
    *) die "unknown service '${1:-}' (expected kafka, clickhouse, redis, prometheus or alertmanager)" ;;
  esac
}

cmd_up() {
  local t0
  t0="$(date +%s%N)"
  cmd_install
  redis_start
  clickhouse_start
  kafka_start
  prometheus_start
  alertmanager_start
  log "all services up ($(( ($(date +%s%N) - t0) / 1000000 )) ms)"
}

cmd_down() {
  local purge=0
  case "${1:-}" in
    --purge) purge=1 ;;
    "") ;;
    *) die "unknown option for down: $1" ;;
  esac
  prometheus_stop
  alertmanager_stop
  kafka_stop
  clickhouse_stop
  redis_stop
  if ((purge)); then
    log "purging .state/kafka .state/clickhouse .state/redis .state/prometheus .state/alertmanager (jars kept)…"
    rm -rf "$KAFKA_DIR" "$CH_DIR" "$REDIS_DIR" "$PROM_DIR" "$AM_DIR"
  fi
}

cmd_status() {
  local rc=0
  kafka_status || rc=3
  clickhouse_status || rc=3
  redis_status || rc=3
  prometheus_status || rc=3
  alertmanager_status || rc=3
  return $rc
}

main() {
  local cmd="${1:-}"
  [[ $# -gt 0 ]] && shift
  # --cluster anywhere after the command: the local cluster (infra/cluster.sh).
  local arg rest=() cluster=0
  for arg in "$@"; do
    if [[ $arg == --cluster ]]; then cluster=1; else rest+=("$arg"); fi
  done
  [[ $cmd != --cluster ]] || die "--cluster goes after the command: up --cluster, down --cluster or status --cluster"
  if ((cluster)); then
    # shellcheck source=infra/cluster.sh
    . "$INFRA/cluster.sh"
    cluster_main "$cmd" ${rest[@]+"${rest[@]}"}
    return
  fi
  case "$cmd" in
    install) cmd_install ;;
    up) cmd_up ;;
    down) cmd_down "$@" ;;
    status) cmd_status ;;
    start | stop) check_service "${1:-}"; "${1}_$cmd" ;;
    restart) check_service "${1:-}"; "${1}_stop"; "${1}_start" ;;
    -h | --help | help) usage ;;
    "") usage; exit 2 ;;
    *) echo "[stack] unknown command: $cmd" >&2; usage >&2; exit 2 ;;
  esac
}

main "$@"
