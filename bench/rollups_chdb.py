#!/usr/bin/env python3
"""The ClickHouse 25.8 half of bench/rollups.ts, on chdb (ClickHouse embedded).

bench/rollups.ts writes a spec (JSON) and runs this with the interpreter that
test/modern/run.sh installed chdb into; nothing here decides what is loaded or
read, so both engines run the same statements:

  {"database": name,
   "migrations": [statement, ...],           the migration files' statements, split as migrate.ts splits them
   "load": [{"label", "sql"}, ...],           the INSERT ... SELECT FROM numbers() chunks
   "imports": [{"table", "structure", "path", "rows"}, ...],   TSV copies of the rollup job's tables (from 18.16)
   "queries": [{"view", "sql"}, ...],
   "fingerprint": sql,                        one text of sums over what was loaded
   "runs": N, "slowWarmupMs": MS}

Applies the migrations to a fresh database in a temporary folder, runs the load
(progress on stderr), waits for merges, imports the copies, then times each
query: one warm-up and N timed runs (one when the warm-up took over
slowWarmupMs), wall time around session.query(). Prints one JSON object on
stdout: {"engine", "chdb", "loadSeconds", "rows", "parts", "fingerprint", "queries": [{"view",
"ms", "medianMs", "warmupMs", "rows", "error"?}]}.

Usage: rollups_chdb.py SPEC.json
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time


def say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: rollups_chdb.py SPEC.json", file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        spec = json.load(f)

    import chdb
    from chdb.session import Session

    db = spec["database"]
    with tempfile.TemporaryDirectory(prefix="agentledger-bench-chdb-") as tmp:
        session = Session(tmp)
        try:
            def scalar(sql: str) -> str:
                return session.query(sql, "TSV").bytes().decode().strip()

            engine = scalar("SELECT version()")
            session.query(f"CREATE DATABASE {db}", "Null")
            session.query(f"USE {db}", "Null")
            for statement in spec["migrations"]:
                session.query(statement, "Null")
            say(f"ClickHouse {engine} (chdb {chdb.__version__}): {len(spec['migrations'])} migration statements applied")

            started = time.perf_counter()
            for i, chunk in enumerate(spec["load"], 1):
                session.query(chunk["sql"], "Null")
                rows = int(scalar("SELECT count() FROM envelopes"))
                s = time.perf_counter() - started
                say(f"load {i}/{len(spec['load'])}: {chunk['label']}, {rows:,} rows in {s:.0f} s ({rows / s:,.0f} rows/s)")
            load_seconds = time.perf_counter() - started
            rows = int(scalar("SELECT count() FROM envelopes"))

            # As on 18.16: reads start once the merges the load set off are done.
            settle = time.perf_counter()
            while int(scalar("SELECT count() FROM system.merges")) > 0 and time.perf_counter() - settle < 300:
                time.sleep(1)
            parts = int(scalar(f"SELECT count() FROM system.parts WHERE database = '{db}' AND table = 'envelopes' AND active"))
            fingerprint = scalar(spec["fingerprint"])
            say(f"fingerprint: {fingerprint}")
            say(f"loaded {rows:,} rows in {load_seconds:.1f} s; merges settled in {time.perf_counter() - settle:.0f} s, {parts} active parts")

            for imp in spec["imports"]:
                structure = imp["structure"].replace("'", "\\'")
                path = imp["path"].replace("'", "\\'")
                session.query(f"INSERT INTO {imp['table']} SELECT * FROM file('{path}', 'TabSeparated', '{structure}')", "Null")
                got = int(scalar(f"SELECT count() FROM {imp['table']}"))
                if got != imp["rows"]:
                    raise RuntimeError(f"imported {got} rows into {imp['table']}, expected {imp['rows']}")
            if spec["imports"]:
                say("imported " + ", ".join(f"{i['table']} ({i['rows']:,} rows)" for i in spec["imports"]))

            results = []
            for q in spec["queries"]:
                results.append(time_query(session, q, spec["runs"], spec["slowWarmupMs"]))
                r = results[-1]
                if "error" in r:
                    say(f"{q['view']}: error: {r['error']}")
                else:
                    say(f"{q['view']}: {r['medianMs']:.0f} ms median of {[round(x) for x in r['ms']]} (warm-up {r['warmupMs']:.0f}), {r['rows']} rows")
        finally:
            session.cleanup()

    print(json.dumps({"engine": engine, "chdb": chdb.__version__, "loadSeconds": load_seconds, "rows": rows, "parts": parts, "fingerprint": fingerprint, "queries": results}))
    return 0


def time_query(session, q: dict, runs: int, slow_warmup_ms: float) -> dict:
    def once() -> tuple[float, int]:
        t = time.perf_counter()
        out = session.query(q["sql"], "JSONEachRow").bytes()
        ms = (time.perf_counter() - t) * 1000
        return ms, sum(1 for line in out.split(b"\n") if line.strip())

    try:
        warm_ms, rows = once()
        timed = []
        for _ in range(1 if warm_ms > slow_warmup_ms else runs):
            ms, rows = once()
            timed.append(ms)
    except Exception as e:  # chdb raises RuntimeError carrying the server's message
        return {"view": q["view"], "ms": [], "medianMs": None, "warmupMs": None, "rows": 0, "error": str(e).strip().split("\n")[0][:200]}
    return {"view": q["view"], "ms": timed, "medianMs": statistics.median(timed), "warmupMs": warm_ms, "rows": rows}


if __name__ == "__main__":
    sys.exit(main(sys.argv))
