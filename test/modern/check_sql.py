#!/usr/bin/env python3
"""Runs every ClickHouse statement of the project on a current ClickHouse engine.

The local server is ClickHouse 18.16; users run current ClickHouse. This checker
proves the modern half with chdb (ClickHouse embedded in a Python module):

  1. the runner's bootstrap statements (schema_migrations and its lock table),
  2. every statement of every schema/clickhouse/NNNN_*.sql migration, in order,
  3. every query file src/**/*.sql (but the fragments it includes,
     src/clickhouse/queries/fragments/), its macros expanded, with each
     `{NAME:TYPE}` placeholder replaced by the EXAMPLE literal of its header
     line `-- param: NAME TYPE EXAMPLE`,
  4. every ClickHouse query of the Grafana dashboards (infra/grafana/dashboards/*.json;
     the operations dashboard's PromQL is prometheus-scrape.test.ts's), its
     macros expanded as grafana-clickhouse-datasource expands them
     (grafana_macros.py, first held to test/fixtures/grafana/macros.json), over
     a few rows planted in the tables the panels read, with readonly=1,
  5. migration 0022 over rows stored by 0008's layout (facts by name): every
     fact reads the same after it, a new part holds the slots only, and an
     insert naming a fact is refused,
  6. the insert formats (src/store/insert-format.ts): the columns and types
     ingest's encoders declare are the migrated tables' (no drift), and the
     hostile rows of test/fixtures/rowbinary/ inserted as TabSeparated and as
     RowBinary into envelopes and craze_events read back as RowBinary byte for
     byte the fixture's .rowbinary file.

Statements are split exactly as src/migrate/migrations.ts splitStatements()
does. Prints one line per statement and a final `N passed, M failed`; exits 1 on
any failure.

Usage: check_sql.py REPO_ROOT
Only dependency: chdb.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

DATABASE = "agentledger_check"

# Must stay identical to the runner's (src/migrate/migrate.ts).
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
    """splitStatements() of migrations.ts: drop `--` lines, split on `;` at a line end."""
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


# The query files' macro `decimal_text(d)`: a Decimal128 sum as exact
# text, expanded as src/clickhouse/sql.ts (decimalTextSql, expandQuery)
# expands it (test/unit/clickhouse/decimal-text.test.ts checks that the two agree).
E18 = "toDecimal128('1000000000000000000', 0)"
DECIMAL_TEXT_TEMPLATE = (
    "if(abs({d}) < {e18}, toString({d} - intDiv({d}, {e18}) * {e18}), "
    "concat(toString(intDiv({d}, {e18})), substring(toString(abs({d} - intDiv({d}, {e18}) * {e18}) + {e18}), 2)))"
)
DECIMAL_TEXT = re.compile(r"\bdecimal_text\((\w+)\)")


# The query files' other macro, `include(name)`: the piece of SQL in
# src/clickhouse/queries/fragments/NAME.sql, expanded as sql.ts
# (expandIncludes) expands it: the fragment without its comment lines, each
# line after the first indented as the line the include stands on; fragments
# may include others, not themselves (test/unit/clickhouse/include.test.ts checks
# that the two agree on every query file).
INCLUDE = re.compile(r"\binclude\((\w+)\)")
FRAGMENTS = Path("src") / "clickhouse" / "queries" / "fragments"


def without_comments(text: str) -> str:
    return "\n".join(line for line in text.split("\n") if not line.lstrip().startswith("--")).strip()


def expand_includes(text: str, fragments: Path, within: tuple[str, ...] = ()) -> str:
    def repl(m: re.Match[str]) -> str:
        name = m.group(1)
        if name in within:
            raise QueryFileError(f"fragment {name} includes itself ({' > '.join((*within, name))})")
        path = fragments / f"{name}.sql"
        if not path.is_file():
            raise QueryFileError(f"include({name}): no fragment {path}")
        body = without_comments(path.read_text(encoding="utf-8"))
        if not body or body.endswith(";"):
            raise QueryFileError(f"fragment {name}: empty, or a statement ending with ';'")
        start = text.rfind("\n", 0, m.start()) + 1
        indent = re.match(r"[ \t]*", text[start:]).group(0)
        lines = expand_includes(body, fragments, (*within, name)).split("\n")
        return "\n".join(line if i == 0 or line == "" else indent + line for i, line in enumerate(lines))

    return INCLUDE.sub(repl, text)


def expand_query(text: str, fragments: Path) -> str:
    """include(name) first, then decimal_text(d), as sql.ts expandQuery()."""
    return DECIMAL_TEXT.sub(lambda m: DECIMAL_TEXT_TEMPLATE.format(d=m.group(1), e18=E18), expand_includes(text, fragments))


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


# Rows for the dashboard's panels to read (the 18.16 half ingests real traffic:
# test/integration/grafana-dashboard.test.ts): one verified ModelCalled, one
# tampered, a convergence warning, a failed sub-agent, a committed rollup hour
# and a firing alert, all on 2025-12-01.
GRAFANA_ROWS = [
    "INSERT INTO envelopes (loop_id, seq, time, time_text, kind, kind_class, verdict, kafka_topic, kafka_partition, kafka_offset, ingested_at, "
    "s1, s2, n1, n2, n3) VALUES "
    "('g-loop', 1, '2025-12-01 10:00:00', '2025-12-01T10:00:00Z', 'ModelCalled', 'ModelCalled', 'ok', 'g', 0, 1, '2025-12-01 10:00:01', 'p', 'm', 10, 5, 123000000000045), "
    "('g-loop', 2, '2025-12-01 10:05:00', '2025-12-01T10:05:00Z', 'ModelCalled', 'ModelCalled', 'mismatch', 'g', 0, 2, '2025-12-01 10:05:01', 'p', 'm', 1, 1, 7)",
    "INSERT INTO spend_rollup_root_hour (hour, version, source, root_loop_id, calls, input_tokens, output_tokens, cost_pico) VALUES "
    "('2025-12-01 10:00:00', 5, 'runtime', 'g-loop', 1, 10, 5, 123000000000045)",
    "INSERT INTO spend_rollup_model_hour (hour, version, source, provider, model, loop_name, calls, input_tokens, output_tokens, cost_pico, unpriced_calls) VALUES "
    "('2025-12-01 10:00:00', 5, 'runtime', 'p', 'm', 'task', 1, 10, 5, 123000000000045, 0)",
    "INSERT INTO event_rollup_hour (hour, version, kind, label, outcome, loop_id, events, flagged) VALUES "
    "('2025-12-01 10:00:00', 5, 'ConvergenceWarning', 'repeat', '', 'g-loop', 2, 0), "
    "('2025-12-01 10:00:00', 5, 'SubAgentCompleted', 'search', 'Failed', '', 1, 0), "
    "('2025-12-01 10:00:00', 5, 'ToolCalled', 'grep', '', '', 4, 1)",
    "INSERT INTO rollup_commits (hour, version, committed_at) VALUES ('2025-12-01 10:00:00', 5, '2025-12-01 10:30:00')",
    "INSERT INTO alerts (rule, subject, transition_key, notification, state, severity, fired_at_ms, resolved_at_ms, at_ms, notifications, detail, recorded_at) VALUES "
    "('stuck_loop', 'g-loop', 'k1', 'fired', 'firing', 'critical', 1764583200000, 0, 1764583200000, 1, '', '2025-12-01 10:00:00')",
]
# What some panels must show over those rows: exact money text (the verified
# call's 123.000000000045 USD; the tampered call's 7 picodollars), counts.
GRAFANA_EXPECT = {
    "Top models": ("cost_usd", "123.000000000045"),
    "Top roots": ("cost_usd", "123.000000000045"),
    "Spend not counted (unverified links)": ("cost_usd", "0.000000000007"),
    "Stuck or stalled loops": ("stuck", 1),
    "Chain violations": ("violations", 1),
    "Stuck and stalled loops": ("loop_id", "g-loop"),
    "Sub-agent failure rate": ("failure_rate", 1),
}
# 2025-12-01 00:00:00 to 23:59:59 UTC, a 30 min interval.
GRAFANA_RANGE = (1764547200, 1764633599, 1800)
GRAFANA_DATABASE = "agentledger_grafana"

# Step 5: migration 0022 over stored rows, as 18.16 runs it
# (test/integration/folded-facts.test.ts): rows written by the layout of
# 0008 (facts by name), at the edges of their types, over two partitions.
FOLD_DATABASE = "agentledger_fold"
FOLD_HEAD = ("INSERT INTO envelopes (loop_id, seq, time, time_text, kind, kind_class, verdict, kafka_topic, kafka_partition, "
             "kafka_offset, ingested_at, ")
FOLD_ROWS = [
    FOLD_HEAD + "model_provider, model_name, input_tokens, output_tokens, cost_pico, cost_usd_text, duration_ms) VALUES "
    "('a', 1, '2026-11-30 10:00:00', '', 'ModelCalled', 'ModelCalled', 'ok', 't', 0, 1, '2026-11-30 12:00:00', 'p', 'm\\tx', 5, 6, "
    "9223372036854775807, '9.2', 7)",
    FOLD_HEAD + "fork_source, fork_at_seq) VALUES "
    "('a', 2, '2026-11-30 10:00:00', '', 'ForkedFrom', 'ForkedFrom', 'fork', 't', 0, 2, '2026-11-30 12:00:00', 'z', 18446744073709551615)",
    FOLD_HEAD + "tool, tool_is_error, duration_ms) VALUES "
    "('a', 3, '2026-10-30 10:00:00', '', 'ToolCalled', 'ToolCalled', 'ok', 't', 0, 3, '2026-10-30 12:00:00', 'bash', 1, 9)",
    FOLD_HEAD + "outcome, error, spend_raw, spend_pico, spend_usd_text, spend_tokens, spend_wall_ms, spend_iterations) VALUES "
    "('b', 1, '2026-10-30 10:00:00', '', 'LoopFinished', 'LoopFinished', 'ok', 't', 0, 4, '2026-10-30 12:00:00', 'Completed', 'e', "
    "'{\"usd\":1}', -9223372036854775808, '1', 3, 4, 5)",
    FOLD_HEAD + "loop_name, parent_loop_id, depth, loop_seed, config_hash) VALUES "
    "('b', 2, '2026-10-30 10:00:00', '', 'LoopStarted', 'LoopStarted', 'ok', 't', 0, 5, '2026-10-30 12:00:00', 'n', 'r', 2, -7, 'c')",
]


def check_fold(root: Path, session, check, fail) -> None:
    """Step 5: 0022 folds stored facts into the slots; every fact reads the same after."""
    files = sorted((root / "schema" / "clickhouse").glob("*.sql"))
    facts = re.findall(r"^ALTER TABLE envelopes ADD COLUMN (\w+) ", (root / "schema" / "clickhouse" / "0008_envelope_facts.sql")
                       .read_text(encoding="utf-8"), re.M)
    session.query(f"CREATE DATABASE {FOLD_DATABASE}", "CSV")
    session.query(f"USE {FOLD_DATABASE}", "CSV")
    for path in files:
        if int(path.name[:4]) > 21:
            continue
        for sql in split_statements(path.read_text(encoding="utf-8")):
            session.query(sql, "Null")
    for i, sql in enumerate(FOLD_ROWS, 1):
        check(f"<fold>: a row of 0008's layout {i}", sql)
    read = f"SELECT loop_id, seq, {', '.join(facts)} FROM envelopes ORDER BY loop_id, seq FORMAT TSV"
    before = session.query(read, "TSV").bytes().decode()
    for path in files:
        if int(path.name[:4]) <= 21:
            continue
        for i, sql in enumerate(split_statements(path.read_text(encoding="utf-8")), 1):
            check(f"<fold> {path.name}:{i}", sql)
    after = session.query(read, "TSV").bytes().decode()
    if after != before or before.count("\n") != len(FOLD_ROWS):
        fail("<fold>: every fact reads the same after 0022", f"before {before!r}, after {after!r}")
    else:
        check("<fold>: every fact reads the same after 0022", "SELECT 1")
    # A part written after 0022 holds the slots and no fact. (The parts
    # before it may keep the fact files on current versions, unread: an
    # ALIAS is computed, never read from a part; 18.16 removes them.)
    check("<fold>: a row of 0022's layout (slots), in a partition of its own",
          "INSERT INTO envelopes (loop_id, seq, time, time_text, kind, kind_class, verdict, kafka_topic, kafka_partition, "
          "kafka_offset, ingested_at, s1, s2, n3) VALUES ('c', 1, '2026-12-01 10:00:00', '', 'ModelCalled', 'ModelCalled', 'ok', "
          "'t', 0, 6, '2026-12-01 12:00:00', 'p', 'm', 42)")
    new_part = ("FROM system.parts_columns WHERE database = currentDatabase() AND table = 'envelopes' AND active "
                "AND partition_id = '202612'")
    got = session.query(f"SELECT countIf(column IN ({', '.join(repr(f) for f in facts)})), countIf(column IN "
                        "('s1', 's2', 's3', 's4', 's5', 's6', 'n1', 'n2', 'n3', 'n4')) " + new_part, "TSV").bytes().decode().strip()
    if got != "0\t10":
        fail("<fold>: the new part holds the ten slots and no fact", f"facts, slots: {got!r}")
    else:
        check("<fold>: the new part holds the ten slots and no fact", "SELECT 1")
    fact_of_new = session.query("SELECT model_provider, model_name, cost_pico FROM envelopes WHERE loop_id = 'c'", "TSV").bytes().decode().strip()
    if fact_of_new != "p\tm\t42":
        fail("<fold>: the new row's facts read from its slots", repr(fact_of_new))
    else:
        check("<fold>: the new row's facts read from its slots", "SELECT 1")
    try:
        session.query(FOLD_ROWS[0], "Null")
        fail("<fold>: an insert naming a fact is refused", "accepted")
    except Exception:
        check("<fold>: an insert naming a fact is refused", "SELECT 1")


def check_rowbinary(root: Path, session, check, fail) -> None:
    """Step 6: both insert formats of the fixture's rows read back byte for byte the same, on current ClickHouse."""
    fixtures = root / "test" / "fixtures" / "rowbinary"
    for spec_path in sorted(fixtures.glob("*.json")):
        spec = json.loads(spec_path.read_text(encoding="utf-8"))
        table, columns = spec["table"], spec["columns"]
        label = f"<formats> {table}"
        described = session.query(
            f"SELECT name, type FROM system.columns WHERE database = currentDatabase() AND table = '{table}' "
            "AND default_kind NOT IN ('ALIAS', 'MATERIALIZED') ORDER BY position", "JSONEachRow").bytes().decode()
        stored = [[c["name"], c["type"]] for c in map(json.loads, described.splitlines())]
        if sorted(stored) != sorted(columns):
            fail(f"{label}: declared columns", f"the table stores {stored}, the encoders declare {columns}")
        else:
            check(f"{label}: the declared columns and types are the table's", "SELECT 1")
        names = ", ".join(name for name, _ in columns)
        structure = ", ".join(f"{name} {type_}" for name, type_ in columns).replace("'", "\\'")
        want = (fixtures / f"{table}.rowbinary").read_bytes()
        for fmt, ext in (("TabSeparated", "tsv"), ("RowBinary", "rowbinary")):
            copy = f"formats_{table}_{ext}"
            check(f"{label}: a table like it for {fmt}", f"CREATE TABLE {copy} AS {table}")
            check(f"{label}: the fixture inserted as {fmt}",
                  f"INSERT INTO {copy} ({names}) SELECT {names} FROM file('{fixtures / f'{table}.{ext}'}', '{fmt}', '{structure}')")
            got = session.query(f"SELECT {names} FROM {copy} ORDER BY {spec['order']}", "RowBinary").bytes()
            if got != want:
                at = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]), min(len(got), len(want)))
                fail(f"{label}: {fmt} read back", f"{len(got)} bytes, want {len(want)}; first difference at byte {at}")
            else:
                check(f"{label}: {fmt} reads back as the encoder's RowBinary, byte for byte ({len(want)} bytes)", "SELECT 1")
            check(f"{label}: drop {copy}", f"DROP TABLE {copy}")


def check_grafana(root: Path, session, check, fail) -> None:
    """Step 4: the dashboard's queries, expanded as the plugin sends them."""
    sys.dont_write_bytecode = True  # no __pycache__ in the work tree
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from grafana_macros import MacroContext, check_fixtures

    fixtures = json.loads((root / "test" / "fixtures" / "grafana" / "macros.json").read_text(encoding="utf-8"))
    faults = check_fixtures(fixtures)
    for f in faults:
        fail("<grafana macros>", f)
    if not faults:
        check("<grafana macros>: expander agrees with test/fixtures/grafana/macros.json", "SELECT 1")
    # A database of its own, migrated afresh: the steps before leave rows (the
    # query files' examples insert alerts, sweeps, rollups) the expectations
    # below would have to know about.
    session.query(f"CREATE DATABASE {GRAFANA_DATABASE}", "CSV")
    session.query(f"USE {GRAFANA_DATABASE}", "CSV")
    for path in sorted((root / "schema" / "clickhouse").glob("*.sql")):
        for i, sql in enumerate(split_statements(path.read_text(encoding="utf-8")), 1):
            try:
                session.query(sql, "Null")
            except Exception as e:
                fail(f"<grafana database> {path.name}:{i}", str(e).strip())
    for i, sql in enumerate(GRAFANA_ROWS, 1):
        check(f"<grafana rows>:{i}", sql)
    ctx = MacroContext(*GRAFANA_RANGE)
    dashboards = sorted((root / "infra" / "grafana" / "dashboards").glob("*.json"))
    print(f"[modern] {len(dashboards)} Grafana dashboards (those on ClickHouse checked)")
    if not dashboards:
        fail("infra/grafana/dashboards", "no dashboard JSON")
    try:
        for path in dashboards:
            check_dashboard(root, path, session, ctx, check, fail)
    finally:
        session.query(f"USE {DATABASE}", "CSV")


def check_dashboard(root: Path, path: Path, session, ctx, check, fail) -> None:
    from grafana_macros import MacroError, expand_macros

    rel = path.relative_to(root).as_posix()
    try:
        dashboard = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as e:
        fail(rel, f"not JSON: {e}")
        return
    panels = [q for p in dashboard.get("panels", []) for q in [p, *p.get("panels", [])]]
    # Only the ClickHouse queries: the operations dashboard's are PromQL,
    # evaluated against a real Prometheus by prometheus-scrape.test.ts.
    targets = [(p, t) for p in panels for t in p.get("targets", []) if "clickhouse" in ((t.get("datasource") or p.get("datasource") or {}).get("type") or "")]
    if not targets:
        if any(p.get("targets") for p in panels):
            print(f"[modern] {rel}: no ClickHouse query (another data source), skipped")
            return
        fail(rel, "no panel query")
    for panel, target in targets:
        label = f"{rel} panel {panel.get('id')} {panel.get('title')!r} {target.get('refId')}"
        sql = target.get("rawSql") or ""
        if not sql.strip():
            fail(label, "empty rawSql")
            continue
        try:
            concrete = expand_macros(sql, ctx)
        except MacroError as e:
            fail(label, str(e))
            continue
        # readonly=1 as the dashboard user's profile; chdb takes settings in the query.
        try:
            out = session.query(f"{concrete}\nSETTINGS readonly = 1", "JSONEachRow").bytes().decode()
        except Exception as e:  # chdb raises RuntimeError carrying the server's message
            fail(label, f"{str(e).strip()}\n     {one_line(concrete, 200)}")
            continue
        rows = [json.loads(line) for line in out.splitlines() if line.strip()]
        if not rows:
            fail(label, "no row over the planted rows")
            continue
        want = GRAFANA_EXPECT.get(panel.get("title"))
        if want is not None and [r.get(want[0]) for r in rows] != [want[1]]:
            fail(label, f"{want[0]}: got {[r.get(want[0]) for r in rows]!r}, want [{want[1]!r}]")
            continue
        check(label, "SELECT 1")


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

            # Fragments are pieces of SQL, not statements: each runs inside the files that include it.
            fragments = root / FRAGMENTS
            query_files = sorted(p for p in src_dir.rglob("*.sql") if fragments not in p.parents) if src_dir.is_dir() else []
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
                        concrete = substitute(expand_query(sql, fragments), params)
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
            fact("<facts>: chain_violations is a view (flagged envelopes first, 0019)",
                 "SELECT engine FROM system.tables WHERE database = currentDatabase() AND name = 'chain_violations'", "View")

            check_rowbinary(root, session, check, fail)
            # After the facts: they count the parts of envelopes, which the dashboard's rows add to.
            check_grafana(root, session, check, fail)
            check_fold(root, session, check, fail)
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
