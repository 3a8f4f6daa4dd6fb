#!/usr/bin/env python3
"""Runs every ClickHouse statement of the project on a current ClickHouse engine.

The local server is ClickHouse 18.16; users run current ClickHouse. This checker
proves the modern half with chdb (ClickHouse embedded in a Python module):

  1. the runner's bootstrap statements (schema_migrations and its lock table),
  2. every statement of every schema/clickhouse/NNNN_*.sql migration, in order,
  3. every query file src/**/*.sql, with each `{NAME:TYPE}` placeholder replaced
     by the EXAMPLE literal of its header line `-- param: NAME TYPE EXAMPLE`.

Statements are split exactly as src/sink/clickhouse/migrate.ts splitStatements()
does. Prints one line per statement and a final `N passed, M failed`; exits 1 on
any failure.

Usage: check_sql.py REPO_ROOT
Only dependency: chdb.
"""

from __future__ import annotations

import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

DATABASE = "agentledger_check"

# Must stay identical to the runner's (src/sink/clickhouse/migrate.ts).
BOOTSTRAP = [
    "CREATE TABLE IF NOT EXISTS schema_migrations (version UInt32, name String, "
    "checksum String, applied_at DateTime) ENGINE = MergeTree ORDER BY version",
    "CREATE TABLE schema_migrations_lock (owner String, taken_at DateTime) ENGINE = Log",
]

MIGRATION_FILE = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")
# JavaScript `/;\s*(?:\n|$)/` without the m flag: `$` is the end of the text only.
STATEMENT_END = re.compile(r";\s*(?:\n|\Z)")
PARAM_LINE = re.compile(r"^\s*--\s*param:\s*(.*)$")
PLACEHOLDER = re.compile(r"\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*([^{}]+?)\s*\}")


def split_statements(sql: str) -> list[str]:
    """splitStatements() of migrate.ts: drop `--` lines, split on `;` at a line end."""
    kept = [line for line in sql.split("\n") if not line.lstrip().startswith("--")]
    parts = STATEMENT_END.split("\n".join(kept))
    return [p.strip() for p in parts if p.strip()]


@dataclass
class Param:
    name: str
    type: str
    example: str


class QueryFileError(Exception):
    pass


def norm_type(t: str) -> str:
    return re.sub(r"\s+", "", t)


def parse_param(rest: str) -> Param:
    """`NAME TYPE EXAMPLE`; TYPE may hold spaces inside parentheses (Map(String, UInt32))."""
    m = re.match(r"([A-Za-z_][A-Za-z0-9_]*)\s+", rest)
    if not m:
        raise QueryFileError(f"bad param line: -- param: {rest}")
    name, i, depth, start = m.group(1), m.end(), 0, m.end()
    while i < len(rest):
        c = rest[i]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c.isspace() and depth == 0:
            break
        i += 1
    type_ = rest[start:i]
    example = rest[i:].strip()
    if not type_ or depth != 0 or not example:
        raise QueryFileError(f"bad param line (want NAME TYPE EXAMPLE): -- param: {rest}")
    return Param(name, type_, example)


def parse_params(text: str) -> dict[str, Param]:
    params: dict[str, Param] = {}
    for line in text.split("\n"):
        m = PARAM_LINE.match(line)
        if m:
            p = parse_param(m.group(1).strip())
            if p.name in params:
                raise QueryFileError(f"param {p.name} declared twice")
            params[p.name] = p
    return params


def substitute(statement: str, params: dict[str, Param]) -> str:
    def repl(m: re.Match[str]) -> str:
        name, type_ = m.group(1), m.group(2)
        p = params.get(name)
        if p is None:
            raise QueryFileError(f"placeholder {{{name}:{type_}}} has no `-- param: {name} TYPE EXAMPLE` line")
        if norm_type(p.type) != norm_type(type_):
            raise QueryFileError(f"placeholder {{{name}:{type_}}} but the param line says {p.type}")
        return p.example

    return PLACEHOLDER.sub(repl, statement)


def one_line(s: str, width: int = 60) -> str:
    flat = " ".join(s.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: check_sql.py REPO_ROOT", file=sys.stderr)
        return 2
    root = Path(argv[1]).resolve()
    migrations_dir = root / "schema" / "clickhouse"
    src_dir = root / "src"

    import chdb
    from chdb.session import Session

    passed = failed = 0
    failures: list[str] = []

    with tempfile.TemporaryDirectory(prefix="agentledger-chdb-") as tmp:
        session = Session(tmp)
        try:
            engine = session.query("SELECT version()", "CSV").bytes().decode().strip().strip('"')
            print(f"[modern] chdb {chdb.__version__}, ClickHouse engine {engine}")
            session.query(f"CREATE DATABASE {DATABASE}", "CSV")
            session.query(f"USE {DATABASE}", "CSV")

            def check(label: str, sql: str) -> None:
                nonlocal passed, failed
                try:
                    session.query(sql, "Null")
                except Exception as e:  # chdb raises RuntimeError carrying the server's message
                    failed += 1
                    msg = str(e).strip()
                    print(f"FAIL {label}  {one_line(sql)}\n     {msg}")
                    failures.append(f"{label}: {msg}")
                else:
                    passed += 1
                    print(f"ok  {label}  {one_line(sql)}")

            def fail(label: str, msg: str) -> None:
                nonlocal failed
                failed += 1
                print(f"FAIL {label}\n     {msg}")
                failures.append(f"{label}: {msg}")

            for i, sql in enumerate(BOOTSTRAP, 1):
                check(f"<runner bootstrap>:{i}", sql)

            # Migrations: the runner's order (file name sort), and its naming rule.
            migration_files = sorted(p for p in migrations_dir.glob("*.sql")) if migrations_dir.is_dir() else []
            print(f"[modern] {len(migration_files)} migration files")
            for path in migration_files:
                rel = path.relative_to(root).as_posix()
                if not MIGRATION_FILE.match(path.name):
                    fail(rel, f"migration file name {path.name} is not NNNN_name.sql")
                    continue
                for i, sql in enumerate(split_statements(path.read_text(encoding="utf-8")), 1):
                    check(f"{rel}:{i}", sql)

            # Every view read once (on the empty tables): CREATE VIEW checks
            # the query's shape, a read also runs it (UNION ALL types, JOINs).
            views = session.query(
                f"SELECT name FROM system.tables WHERE database = '{DATABASE}' AND engine = 'View' ORDER BY name", "TSV"
            ).bytes().decode().split()
            for name in views:
                check(f"<view> {name}", f"SELECT * FROM {name}")

            query_files = sorted(src_dir.rglob("*.sql")) if src_dir.is_dir() else []
            print(f"[modern] {len(query_files)} query files")
            for path in query_files:
                rel = path.relative_to(root).as_posix()
                text = path.read_text(encoding="utf-8")
                try:
                    params = parse_params(text)
                except QueryFileError as e:
                    fail(rel, str(e))
                    continue
                statements = split_statements(text)
                if not statements:
                    fail(rel, "no statement in query file")
                for i, sql in enumerate(statements, 1):
                    try:
                        concrete = substitute(sql, params)
                    except QueryFileError as e:
                        fail(f"{rel}:{i}", str(e))
                        continue
                    check(f"{rel}:{i}", concrete)

            # Facts the exactly-once design rests on, on current ClickHouse (the
            # 18.16 half is test/integration/exactly-once.test.ts).
            def fact(label: str, sql: str, want: str) -> None:
                nonlocal passed
                try:
                    got = session.query(sql, "TSV").bytes().decode().strip()
                except Exception as e:
                    fail(label, str(e).strip())
                    return
                if got != want:
                    fail(label, f"got {got!r}, want {want!r}")
                else:
                    passed += 1
                    print(f"ok  {label}")

            # The columns of 0001 by name: later migrations add columns (0008),
            # which then take their defaults.
            columns = ("(loop_id, seq, time, time_text, kind, kind_class, hash, computed_hash, payload, verdict, "
                       "detail, evidence, kafka_topic, kafka_partition, kafka_offset, ingested_at)")

            def row(offset: int, ingested_at: str, time: str = "2026-11-30 10:00:00") -> str:
                return (f"('loop-x', {offset}, '{time}', '', 'ModelCalled', '', '', '', '', 'ok', '', '', "
                        f"'t', 0, {offset}, '{ingested_at}')")

            def refused_code(sql: str) -> str:
                try:
                    session.query(sql, "Null")
                except Exception as e:
                    m = re.search(r"Code: (\d+)", str(e))
                    return m.group(1) if m else str(e).strip()
                return "accepted"

            parts = f"SELECT count() FROM system.parts WHERE database = '{DATABASE}' AND table = 'envelopes' AND active"
            check("<facts>: stop merges", "SYSTEM STOP MERGES envelopes")
            check("<facts>: one flush, one ingested_at, envelope times across a month boundary",
                  f"INSERT INTO envelopes {columns} VALUES " + ", ".join(
                      [row(1, "2026-12-01 00:00:01", "2026-11-30 23:59:59"), row(2, "2026-12-01 00:00:01", "2026-12-01 00:00:00")]))
            fact("<facts>: that insert is one part", parts, "1")
            check("<facts>: rows stamped per batch across a month boundary (what a flush must not do)",
                  f"INSERT INTO envelopes {columns} VALUES " + ", ".join([row(3, "2026-11-30 23:59:59"), row(4, "2026-12-01 00:00:00")]))
            fact("<facts>: that insert is two parts", parts, "3")
            check("<facts>: a clamped time", f"INSERT INTO envelopes {columns} VALUES " + row(5, "2026-12-01 00:00:01", "2105-12-31 23:59:59"))
            fact("<facts>: the clamped time reads back as written",
                 "SELECT toString(time) FROM envelopes WHERE kafka_offset = 5", "2105-12-31 23:59:59")
            # A run killed half-way through 0008 leaves some columns added; the
            # migrator takes an ADD COLUMN refused with code 15 (here) or 44
            # (18.16), the column being there with the same type, as done
            # (migrate.ts applyStatement).
            got = refused_code("ALTER TABLE envelopes ADD COLUMN cost_pico Int64 DEFAULT 0")
            if got == "15":
                passed += 1
                print("ok  <facts>: re-adding a column of 0008 is refused with code 15 (DUPLICATE_COLUMN)")
            else:
                fail("<facts>: re-adding a column of 0008", f"refused with {got!r}, want code 15 (migrate.ts COLUMN_EXISTS_CODES)")
            fact("<facts>: envelopes_probe has the columns of envelopes, in order",
                 "SELECT (SELECT groupArray(name) FROM (SELECT name FROM system.columns WHERE database = currentDatabase() "
                 "AND table = 'envelopes' ORDER BY position)) = (SELECT groupArray(name) FROM (SELECT name FROM system.columns "
                 "WHERE database = currentDatabase() AND table = 'envelopes_probe' ORDER BY position))", "1")
            fact("<facts>: a row inserted with the columns of 0001 only (an older consumer) reads the facts' defaults",
                 "SELECT cost_pico, cost_usd_text, fork_at_seq, tool_is_error FROM envelopes WHERE kafka_offset = 1", "0\t\t0\t0")
            fact("<facts>: chain_violations is a view of envelopes FINAL",
                 "SELECT engine FROM system.tables WHERE database = currentDatabase() AND name = 'chain_violations'", "View")
        finally:
            session.cleanup()

    if failures:
        print("[modern] failures:")
        for f in failures:
            print(f"  {f}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
