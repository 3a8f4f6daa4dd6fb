#!/usr/bin/env bash
# Checks every ClickHouse statement of the project (runner bootstrap, migrations,
# src/**/*.sql query files, the Grafana dashboard's queries) on a current ClickHouse engine, embedded by chdb.
#
# Installs chdb once into <repo>/.state/venv-chdb (git-ignored); when
# `python3 -m venv` cannot work (Debian without python3-venv: no ensurepip) it
# falls back to `pip install --target <repo>/.state/chdb-pkgs` + PYTHONPATH.
# A stamp (chdb version + interpreter) makes later runs skip the install.
#
# chdb 3.7.2 embeds ClickHouse 25.8.2.1: the same major.minor as the
# docker-compose.yml image (clickhouse/clickhouse-server:25.8). Move the two together.
#
# Usage: test/modern/run.sh
#   PYTHON=/path/to/python3   interpreter to install into (default: python3)
#   CHDB_NO_VENV=1            skip the venv, use the pip --target fallback
set -euo pipefail

CHDB_VERSION=3.7.2

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
state="$repo/.state"
venv="$state/venv-chdb"
pkgs="$state/chdb-pkgs"
log="$state/chdb-install.log"
python="${PYTHON:-python3}"

say() { echo "[modern] $*"; }
die() { echo "[modern] ERROR: $*" >&2; exit 2; }

command -v "$python" >/dev/null 2>&1 || die "$python not found (set PYTHON=...)"
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 8))' || die "$python is older than 3.8 (chdb needs >= 3.8)"
mkdir -p "$state"

# One install at a time (two runs sharing a repo).
if command -v flock >/dev/null 2>&1; then
  exec 9>"$state/chdb.lock"
  flock 9
fi

# What an install is valid for: the chdb version and the exact interpreter.
want="chdb==$CHDB_VERSION $("$python" -c 'import sys; print(sys.executable, sys.version.split()[0])')"
stamp_ok() { [[ -f "$1/.chdb-stamp" && "$(cat "$1/.chdb-stamp")" == "$want" ]]; }

install_venv() {
  say "creating venv $venv"
  if ! "$python" -m venv --clear "$venv" >>"$log" 2>&1 || [[ ! -x "$venv/bin/python" ]] \
     || ! "$venv/bin/python" -m pip --version >>"$log" 2>&1; then
    say "python3 -m venv failed (on Debian: python3-venv / ensurepip missing); see $log"
    rm -rf "$venv"
    return 1
  fi
  say "installing chdb $CHDB_VERSION into $venv (about 1.2 GB, pandas and pyarrow included) …"
  if ! "$venv/bin/python" -m pip install --disable-pip-version-check "chdb==$CHDB_VERSION" >>"$log" 2>&1; then
    tail -n 20 "$log" >&2
    die "pip install chdb==$CHDB_VERSION failed; see $log"
  fi
  echo "$want" >"$venv/.chdb-stamp"
}

install_target() {
  "$python" -m pip --version >>"$log" 2>&1 || return 1
  say "installing chdb $CHDB_VERSION with pip --target $pkgs …"
  rm -rf "$pkgs"
  # --target is not refused by PEP 668 (externally managed) interpreters.
  if ! "$python" -m pip install --disable-pip-version-check --no-user --target "$pkgs" "chdb==$CHDB_VERSION" >>"$log" 2>&1; then
    tail -n 20 "$log" >&2
    rm -rf "$pkgs"
    die "pip install --target failed; see $log"
  fi
  echo "$want" >"$pkgs/.chdb-stamp"
}

mode=""
if stamp_ok "$venv" && [[ -x "$venv/bin/python" ]]; then
  mode=venv
elif stamp_ok "$pkgs"; then
  mode=target
else
  : >"$log"
  start=$SECONDS
  if [[ -z "${CHDB_NO_VENV:-}" ]] && install_venv; then
    mode=venv
  elif install_target; then
    mode=target
  else
    die "neither 'python3 -m venv' nor 'python3 -m pip' works with $python.
  On Debian: apt-get install python3-venv   (or python3-pip), or set PYTHON=/path/to/another/python3"
  fi
  say "installed in $((SECONDS - start)) s"
fi

exec 9>&- 2>/dev/null || true   # the install is done: let other runs go on

if [[ $mode == venv ]]; then
  say "using chdb $CHDB_VERSION from $venv"
  exec "$venv/bin/python" "$here/check_sql.py" "$repo"
else
  say "using chdb $CHDB_VERSION from $pkgs (PYTHONPATH)"
  PYTHONPATH="$pkgs${PYTHONPATH:+:$PYTHONPATH}" exec "$python" "$here/check_sql.py" "$repo"
fi
