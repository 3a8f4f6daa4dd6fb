/**
 * Logs through pino, one line per event on stderr, so stdout stays free for
 * command output (`--json`). Two formats (AGENTLEDGER_LOG_FORMAT):
 * - `json`: pino's own lines (`level` as its name, `time` as ISO 8601 UTC,
 *   `msg`, then the fields), what Loki, Elasticsearch or Datadog read;
 * - `text`: `2026-12-02T04:00:00.000Z WARN  message key=value …`, for a person
 *   at a terminal: pino's line, laid out again by `textLine`.
 * `auto` (the default) is text on a terminal and JSON otherwise.
 *
 * Writes are synchronous: a line logged just before `process.exit` (a
 * one-line fatal error) is on stderr when the process ends.
 */
import { pino, stdTimeFunctions } from 'pino';
/** `auto` resolved: text when stderr is a terminal. */
export function logFormat(setting, stderrIsTty = process.stderr.isTTY === true) {
    return setting === 'auto' ? (stderrIsTty ? 'text' : 'json') : setting;
}
function formatValue(value) {
    if (typeof value === 'string')
        return /^[\w.:/@-]+$/.test(value) ? value : JSON.stringify(value);
    return JSON.stringify(value) ?? 'undefined';
}
/** pino's JSON line as the text format lays it out (the keys pino adds first, the fields after). */
export function textLine(json) {
    const { level, time, msg, ...fields } = JSON.parse(json);
    const tail = Object.entries(fields)
        .map(([k, v]) => `${k}=${formatValue(v)}`)
        .join(' ');
    return `${time} ${level.toUpperCase().padEnd(5)} ${msg}${tail ? ' ' + tail : ''}`;
}
/** Values pino would not write as the text format wants them: an Error as its message, a bigint as its digits. */
function plain(fields) {
    if (fields === undefined)
        return undefined;
    let out;
    for (const [k, v] of Object.entries(fields)) {
        if (v instanceof Error || typeof v === 'bigint') {
            out ??= { ...fields };
            out[k] = v instanceof Error ? v.message : v.toString();
        }
    }
    return out ?? fields;
}
function wrap(p) {
    const at = (level) => (msg, fields) => {
        if (!p.isLevelEnabled(level))
            return;
        const f = plain(fields);
        if (f === undefined)
            p[level](msg);
        else
            p[level](f, msg);
    };
    return {
        debug: at('debug'),
        info: at('info'),
        warn: at('warn'),
        error: at('error'),
        child: (fields) => wrap(p.child(plain(fields) ?? {})),
    };
}
export function createLogger(level = 'info', base = {}, options = {}) {
    const format = options.format ?? 'text';
    const write = options.write ?? ((line) => process.stderr.write(`${line}\n`));
    const destination = {
        write: (chunk) => {
            const line = chunk.endsWith('\n') ? chunk.slice(0, -1) : chunk;
            write(format === 'json' ? line : textLine(line));
        },
    };
    const p = pino({
        level,
        base: null,
        timestamp: stdTimeFunctions.isoTime,
        formatters: { level: (label) => ({ level: label }) },
    }, destination);
    return wrap(Object.keys(base).length === 0 ? p : p.child(plain(base) ?? {}));
}
//# sourceMappingURL=logger.js.map