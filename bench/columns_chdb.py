#!/usr/bin/env python3
"""The ClickHouse 25.8 half of bench/columns.ts, on chdb (ClickHouse embedded).

bench/columns.ts writes a spec (JSON) and the insert bodies of every layout
(one file per insert request, in the layout's format: TabSeparated or
RowBinary), then runs this with the interpreter test/modern/run.sh installed
chdb into:

  {"rounds": N, "rows": R,
   "layouts": [{"name", "ddl", "structure", "format", "paths": [file, ...]}, ...]}

Per round (the layout order rotated each round) and layout: a fresh table,
one INSERT ... SELECT FROM file() per body file, merges awaited, OPTIMIZE
FINAL. The CPU of this process (every thread: chdb runs the server's work in
process) is read around the inserts and around merging, as columns.ts reads
the 18.16 server's. Prints the same table of medians.

Usage: columns_chdb.py SPEC.json
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time


def say(line: str) -> None:
    print(f"[columns 25.8] {line}", flush=True)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: columns_chdb.py SPEC.json", file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as f:
        spec = json.load(f)

    import chdb
    from chdb.session import Session

    rows = spec["rows"]
    layouts = spec["layouts"]
    results = {l["name"]: [] for l in layouts}
    with tempfile.TemporaryDirectory(prefix="agentledger-bench-columns-") as tmp:
        session = Session(tmp)
        try:
            def scalar(sql: str) -> str:
                return session.query(sql, "TSV").bytes().decode().strip()

            say(f"ClickHouse {scalar('SELECT version()')} (chdb {chdb.__version__})")
            session.query("CREATE DATABASE bench_columns", "Null")
            session.query("USE bench_columns", "Null")
            for r in range(spec["rounds"]):
                for i in range(len(layouts)):
                    layout = layouts[(i + r) % len(layouts)]
                    table = "v_" + layout["name"].replace("-", "_")
                    session.query(f"DROP TABLE IF EXISTS {table}", "Null")
                    session.query(layout["ddl"].replace("CREATE TABLE envelopes", f"CREATE TABLE {table}", 1), "Null")
                    structure = layout["structure"].replace("'", "\\'")
                    cpu0 = time.process_time()
                    for path in layout["paths"]:
                        session.query(f"INSERT INTO {table} SELECT * FROM file('{path}', '{layout.get('format', 'TabSeparated')}', '{structure}')", "Null")
                    cpu1 = time.process_time()
                    settle = time.perf_counter()
                    while int(scalar(f"SELECT count() FROM system.merges WHERE table = '{table}'")) > 0 and time.perf_counter() - settle < 60:
                        time.sleep(0.25)
                    session.query(f"OPTIMIZE TABLE {table} FINAL", "Null")
                    cpu2 = time.process_time()
                    disk = int(scalar(f"SELECT sum(bytes_on_disk) FROM system.parts WHERE database = 'bench_columns' AND table = '{table}' AND active"))
                    stored = int(scalar(f"SELECT count() FROM {table}"))
                    if stored != rows:
                        raise RuntimeError(f"{table} holds {stored} rows, not {rows}")
                    session.query(f"DROP TABLE {table}", "Null")
                    m = {"insert": (cpu1 - cpu0) * 1e6 / rows, "merge": (cpu2 - cpu1) * 1e6 / rows, "disk": disk / rows}
                    results[layout["name"]].append(m)
                    say(f"round {r + 1}/{spec['rounds']} {layout['name']}: insert {m['insert']:.1f} µs/row, merge {m['merge']:.1f} µs/row, {m['disk']:.0f} B/row on disk")
        finally:
            session.cleanup()

    base = statistics.median(m["insert"] + m["merge"] for m in results["current"])
    say(f"ClickHouse 25.8 (chdb), {rows} rows, {spec['rounds']} rounds, medians (CPU µs per row of the process):")
    say("layout                 insert  merge   total  ratio  disk B/row")
    for layout in layouts:
        ms = results[layout["name"]]
        total = statistics.median(m["insert"] + m["merge"] for m in ms)
        say(f"{layout['name']:<22} {statistics.median(m['insert'] for m in ms):6.1f} {statistics.median(m['merge'] for m in ms):6.1f} "
            f"{total:7.1f} {total / base:6.2f} {statistics.median(m['disk'] for m in ms):11.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
