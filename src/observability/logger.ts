/**
 * A small structured logger: one line per event on stderr, `key=value` pairs
 * after the message, so stdout stays free for command output (`--json`).
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

function formatValue(value: unknown): string {
  if (value instanceof Error) return JSON.stringify(value.message);
  if (typeof value === 'string') return /^[\w.:/@-]+$/.test(value) ? value : JSON.stringify(value);
  if (typeof value === 'bigint') return value.toString();
  return JSON.stringify(value) ?? 'undefined';
}

export function createLogger(
  level: LogLevel = 'info',
  base: Record<string, unknown> = {},
  write: (line: string) => void = (line) => process.stderr.write(line + '\n'),
): Logger {
  const emit = (at: LogLevel, msg: string, fields?: Record<string, unknown>): void => {
    if (rank[at] < rank[level]) return;
    const all = { ...base, ...fields };
    const tail = Object.entries(all)
      .map(([k, v]) => `${k}=${formatValue(v)}`)
      .join(' ');
    write(`${new Date().toISOString()} ${at.toUpperCase().padEnd(5)} ${msg}${tail ? ' ' + tail : ''}`);
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (fields) => createLogger(level, { ...base, ...fields }, write),
  };
}
