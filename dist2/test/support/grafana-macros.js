/**
 * The macros of grafana-clickhouse-datasource (4.20), expanded as the plugin
 * expands them before it sends a panel's SQL to ClickHouse, so a test can run
 * that SQL itself. The expansions are the plugin's (pkg/macros/macros.go):
 * times as `toDateTime(<unix seconds>)`, dates as `toDate('YYYY-MM-DD')` (UTC),
 * `$__interval_s` as whole seconds (at least 1), `$__timeInterval` as
 * `toStartOfInterval(…)`, which ClickHouse 18.16 lacks: expanding it
 * faithfully is what lets the 18.16 run refuse a panel that uses it.
 *
 * Stricter than the plugin in one way: a `$__name` this table does not know
 * is an error here (the plugin leaves it in the SQL), so a panel cannot lean
 * on an expansion nobody checked. test/modern/grafana_macros.py is the same
 * table for the chdb check; both are held to test/fixtures/grafana/macros.json.
 */
const dateTime = (s) => `toDateTime(${Math.floor(s)})`;
const dateTime64 = (s) => `fromUnixTimestamp64Milli(${Math.floor(s * 1000)})`;
const date = (s) => `toDate('${new Date(Math.floor(s) * 1000).toISOString().slice(0, 10)}')`;
const seconds = (ctx) => Math.floor(Math.max(ctx.intervalSeconds, 1));
function arity(name, args, n) {
    if (args.length !== n)
        throw new Error(`$__${name} takes ${n} argument(s), got ${args.length}`);
}
/** Go's time.ParseDuration for the plain forms `$__timeGroup` takes (90s, 5m, 1h, 1h30m). */
function durationSeconds(text) {
    const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
    if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text)
        throw new Error(`$__timeGroup: invalid interval ${JSON.stringify(text)}`);
    const unit = { ms: 0.001, s: 1, m: 60, h: 3600 };
    const secs = Math.round(parts.reduce((n, p) => n + Number(p[1]) * unit[p[2]], 0));
    if (secs <= 0)
        throw new Error(`$__timeGroup: interval must be positive, got ${JSON.stringify(text)}`);
    return secs;
}
const noArgs = (f) => (args, ctx) => {
    if (args.length > 0)
        throw new Error('takes no argument');
    return f(ctx);
};
const MACROS = {
    fromTime: noArgs((c) => dateTime(c.from)),
    toTime: noArgs((c) => dateTime(c.to)),
    fromTime_ms: noArgs((c) => dateTime64(c.from)),
    toTime_ms: noArgs((c) => dateTime64(c.to)),
    interval_s: noArgs((c) => String(seconds(c))),
    timeFilter: (a, c) => (arity('timeFilter', a, 1), `${a[0]} >= ${dateTime(c.from)} AND ${a[0]} <= ${dateTime(c.to)}`),
    timeFilter_ms: (a, c) => (arity('timeFilter_ms', a, 1), `${a[0]} >= ${dateTime64(c.from)} AND ${a[0]} <= ${dateTime64(c.to)}`),
    dateFilter: (a, c) => (arity('dateFilter', a, 1), `${a[0]} >= ${date(c.from)} AND ${a[0]} <= ${date(c.to)}`),
    dateTimeFilter: (a, c) => (arity('dateTimeFilter', a, 2), `(${a[0]} >= ${date(c.from)} AND ${a[0]} <= ${date(c.to)}) AND (${a[1]} >= ${dateTime(c.from)} AND ${a[1]} <= ${dateTime(c.to)})`),
    dt: (a, c) => MACROS.dateTimeFilter(a, c),
    timeFrom: (a, c) => (arity('timeFrom', a, 1), `${a[0]} >= ${dateTime(c.from)}`),
    timeTo: (a, c) => (arity('timeTo', a, 1), `${a[0]} <= ${dateTime(c.to)}`),
    timeInterval: (a, c) => (arity('timeInterval', a, 1), `toStartOfInterval(toDateTime(${a[0]}), INTERVAL ${seconds(c)} second)`),
    timeInterval_ms: (a, c) => (arity('timeInterval_ms', a, 1), `toStartOfInterval(toDateTime64(${a[0]}, 3), INTERVAL ${Math.floor(Math.max(c.intervalSeconds * 1000, 1))} millisecond)`),
    timeGroup: (a) => (arity('timeGroup', a, 2), `toStartOfInterval(toDateTime(${a[0]}), INTERVAL ${durationSeconds(a[1].trim().replace(/^['"]|['"]$/g, ''))} second)`),
};
/** The macro names this expander knows (every one the plugin has that a panel could use). */
export const MACRO_NAMES = Object.keys(MACROS);
/** Splits `a, f(b, c), d` at its top-level commas; each argument trimmed. */
function splitArgs(inner) {
    if (inner.trim() === '')
        return [];
    const args = [];
    let depth = 0;
    let start = 0;
    for (let i = 0; i < inner.length; i++) {
        const c = inner[i];
        if (c === '(')
            depth++;
        else if (c === ')')
            depth--;
        else if (c === ',' && depth === 0) {
            args.push(inner.slice(start, i).trim());
            start = i + 1;
        }
    }
    args.push(inner.slice(start).trim());
    return args;
}
/** The SQL with every `$__name` and `$__name(args…)` expanded; arguments are expanded first. */
export function expandMacros(sql, ctx) {
    let out = '';
    let i = 0;
    for (;;) {
        const at = sql.indexOf('$__', i);
        if (at < 0)
            return out + sql.slice(i);
        out += sql.slice(i, at);
        const name = /^[A-Za-z0-9_]+/.exec(sql.slice(at + 3))?.[0] ?? '';
        const expand = MACROS[name];
        if (expand === undefined)
            throw new Error(`unknown macro $__${name} (at ${at})`);
        let end = at + 3 + name.length;
        let args = [];
        if (sql[end] === '(') {
            let depth = 0;
            let close = -1;
            for (let j = end; j < sql.length; j++) {
                if (sql[j] === '(')
                    depth++;
                else if (sql[j] === ')' && --depth === 0) {
                    close = j;
                    break;
                }
            }
            if (close < 0)
                throw new Error(`$__${name}: unbalanced parenthesis`);
            args = splitArgs(expandMacros(sql.slice(end + 1, close), ctx));
            end = close + 1;
        }
        try {
            out += expand(args, ctx);
        }
        catch (e) {
            throw new Error(`$__${name}: ${e.message}`);
        }
        i = end;
    }
}
//# sourceMappingURL=grafana-macros.js.map