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
import { pino, stdTimeFunctions, type DestinationStream } from 'pino';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFormat = 'text' | 'json';

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

export interface LoggerOptions {
  readonly format?: LogFormat;
  /** Where each finished line goes (without its newline); stderr by default. */
  readonly write?: (line: string) => void;
}

/** `auto` resolved: text when stderr is a terminal. */
export function logFormat(setting: LogFormat | 'auto', stderrIsTty = process.stderr.isTTY === true): LogFormat {
  return setting === 'auto' ? (stderrIsTty ? 'text' : 'json') : setting;
}

function formatValue(value: unknown): string {
  if (typeof value === 'string') return /^[\w.:/@-]+$/.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value) ?? 'undefined';
}

/** pino's JSON line as the text format lays it out (the keys pino adds first, the fields after). */
export function textLine(json: string): string {
  const { level, time, msg, ...fields } = JSON.parse(json) as { level: string; time: string; msg: string } & Record<string, unknown>;
  const tail = Object.entries(fields)
    .map(([k, v]) => `${k}=${formatValue(v)}`)
    .join(' ');
  return `${time} ${level.toUpperCase().padEnd(5)} ${msg}${tail ? ' ' + tail : ''}`;
}

/** Values pino would not write as the text format wants them: an Error as its message, a bigint as its digits. */
function plain(fields: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (fields === undefined) return undefined;
  let out: Record<string, unknown> | undefined;
  for (const [k, v] of Object.entries(fields)) {
    if (v instanceof Error || typeof v === 'bigint') {
      out ??= { ...fields };
      out[k] = v instanceof Error ? v.message : v.toString();
    }
  }
  return out ?? fields;
}

function wrap(p: pino.Logger): Logger {
  const at =
    (level: LogLevel) =>
    (msg: string, fields?: Record<string, unknown>): void => {
      if (!p.isLevelEnabled(level)) return;
      const f = plain(fields);
      if (f === undefined) p[level](msg);
      else p[level](f, msg);
    };
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: (fields) => wrap(p.child(plain(fields) ?? {})),
  };
}

export function createLogger(level: LogLevel = 'info', base: Record<string, unknown> = {}, options: LoggerOptions = {}): Logger {
  const format = options.format ?? 'text';
  const write = options.write ?? ((line: string) => process.stderr.write(`${line}\n`));
  const destination: DestinationStream = {
    write: (chunk: string) => {
      const line = chunk.endsWith('\n') ? chunk.slice(0, -1) : chunk;
      write(format === 'json' ? line : textLine(line));
    },
  };
  const p = pino(
    {
      level,
      base: null,
      timestamp: stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
  return wrap(Object.keys(base).length === 0 ? p : p.child(plain(base) ?? {}));
}
