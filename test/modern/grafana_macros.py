"""The macros of grafana-clickhouse-datasource (4.20), expanded as the plugin does.

The chdb half of test/support/grafana-macros.ts (the 18.16 half): the same
table, held to the same fixtures (test/fixtures/grafana/macros.json), so a
dashboard panel's SQL runs on current ClickHouse exactly as the plugin would
send it. Times are `toDateTime(<unix seconds>)`, dates `toDate('YYYY-MM-DD')`
in UTC, `$__interval_s` whole seconds (at least 1), `$__timeInterval`
`toStartOfInterval(...)`. A `$__name` not in the table is an error (the plugin
would leave it in the SQL). Stdlib only.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable


class MacroError(Exception):
    pass


@dataclass(frozen=True)
class MacroContext:
    start: int  # Unix seconds (Grafana's from)
    end: int  # Unix seconds (Grafana's to)
    interval_seconds: float


def _dt(s: float) -> str:
    return f"toDateTime({math.floor(s)})"


def _dt64(s: float) -> str:
    return f"fromUnixTimestamp64Milli({math.floor(s * 1000)})"


def _date(s: float) -> str:
    return "toDate('" + datetime.fromtimestamp(math.floor(s), tz=timezone.utc).strftime("%Y-%m-%d") + "')"


def _secs(c: MacroContext) -> int:
    return math.floor(max(c.interval_seconds, 1))


def _arity(name: str, args: list[str], n: int) -> None:
    if len(args) != n:
        raise MacroError(f"$__{name} takes {n} argument(s), got {len(args)}")


def _duration(text: str) -> int:
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h)", text)
    if not parts or "".join(a + b for a, b in parts) != text:
        raise MacroError(f"$__timeGroup: invalid interval {text!r}")
    unit = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
    secs = round(sum(float(a) * unit[b] for a, b in parts))
    if secs <= 0:
        raise MacroError(f"$__timeGroup: interval must be positive, got {text!r}")
    return secs


def _no_args(f: Callable[[MacroContext], str]) -> Callable[[list[str], MacroContext], str]:
    def g(args: list[str], c: MacroContext) -> str:
        if args:
            raise MacroError("takes no argument")
        return f(c)
    return g


def _one(name: str, f: Callable[[str, MacroContext], str]) -> Callable[[list[str], MacroContext], str]:
    def g(args: list[str], c: MacroContext) -> str:
        _arity(name, args, 1)
        return f(args[0], c)
    return g


def _date_time_filter(args: list[str], c: MacroContext) -> str:
    _arity("dateTimeFilter", args, 2)
    d, t = args
    return f"({d} >= {_date(c.start)} AND {d} <= {_date(c.end)}) AND ({t} >= {_dt(c.start)} AND {t} <= {_dt(c.end)})"


def _time_group(args: list[str], c: MacroContext) -> str:
    _arity("timeGroup", args, 2)
    return f"toStartOfInterval(toDateTime({args[0]}), INTERVAL {_duration(args[1].strip().strip(chr(39) + chr(34)))} second)"


MACROS: dict[str, Callable[[list[str], MacroContext], str]] = {
    "fromTime": _no_args(lambda c: _dt(c.start)),
    "toTime": _no_args(lambda c: _dt(c.end)),
    "fromTime_ms": _no_args(lambda c: _dt64(c.start)),
    "toTime_ms": _no_args(lambda c: _dt64(c.end)),
    "interval_s": _no_args(lambda c: str(_secs(c))),
    "timeFilter": _one("timeFilter", lambda a, c: f"{a} >= {_dt(c.start)} AND {a} <= {_dt(c.end)}"),
    "timeFilter_ms": _one("timeFilter_ms", lambda a, c: f"{a} >= {_dt64(c.start)} AND {a} <= {_dt64(c.end)}"),
    "dateFilter": _one("dateFilter", lambda a, c: f"{a} >= {_date(c.start)} AND {a} <= {_date(c.end)}"),
    "dateTimeFilter": _date_time_filter,
    "dt": _date_time_filter,
    "timeFrom": _one("timeFrom", lambda a, c: f"{a} >= {_dt(c.start)}"),
    "timeTo": _one("timeTo", lambda a, c: f"{a} <= {_dt(c.end)}"),
    "timeInterval": _one("timeInterval", lambda a, c: f"toStartOfInterval(toDateTime({a}), INTERVAL {_secs(c)} second)"),
    "timeInterval_ms": _one("timeInterval_ms",
                            lambda a, c: f"toStartOfInterval(toDateTime64({a}, 3), INTERVAL {math.floor(max(c.interval_seconds * 1000, 1))} millisecond)"),
    "timeGroup": _time_group,
}

_NAME = re.compile(r"[A-Za-z0-9_]+")


def _split_args(inner: str) -> list[str]:
    if not inner.strip():
        return []
    args, depth, start = [], 0, 0
    for i, ch in enumerate(inner):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            args.append(inner[start:i].strip())
            start = i + 1
    args.append(inner[start:].strip())
    return args


def expand_macros(sql: str, c: MacroContext) -> str:
    """The SQL with every `$__name` and `$__name(args...)` expanded; arguments first."""
    out, i = [], 0
    while True:
        at = sql.find("$__", i)
        if at < 0:
            out.append(sql[i:])
            return "".join(out)
        out.append(sql[i:at])
        m = _NAME.match(sql, at + 3)
        name = m.group(0) if m else ""
        expand = MACROS.get(name)
        if expand is None:
            raise MacroError(f"unknown macro $__{name} (at {at})")
        end = at + 3 + len(name)
        args: list[str] = []
        if end < len(sql) and sql[end] == "(":
            depth, close = 0, -1
            for j in range(end, len(sql)):
                if sql[j] == "(":
                    depth += 1
                elif sql[j] == ")":
                    depth -= 1
                    if depth == 0:
                        close = j
                        break
            if close < 0:
                raise MacroError(f"$__{name}: unbalanced parenthesis")
            args = _split_args(expand_macros(sql[end + 1:close], c))
            end = close + 1
        try:
            out.append(expand(args, c))
        except MacroError as e:
            raise MacroError(f"$__{name}: {e}") from None
        i = end


def check_fixtures(fixtures: dict) -> list[str]:
    """Faults of this expander against macros.json ([] when it agrees)."""
    c = MacroContext(fixtures["from"], fixtures["to"], fixtures["intervalSeconds"])
    faults = []
    for case in fixtures["cases"]:
        try:
            got = expand_macros(case["sql"], c)
        except MacroError as e:
            faults.append(f"{case['sql']!r}: refused ({e}), want {case['want']!r}")
            continue
        if got != case["want"]:
            faults.append(f"{case['sql']!r}: got {got!r}, want {case['want']!r}")
    for case in fixtures["refused"]:
        try:
            got = expand_macros(case["sql"], c)
        except MacroError:
            continue
        faults.append(f"{case['sql']!r}: expanded to {got!r}, want refused ({case['why']})")
    return faults
