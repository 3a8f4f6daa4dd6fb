/**
 * The one place a ClickHouse client is made. The settings here are the ones
 * both ClickHouse 18.16 (Debian's, used by the local stack) and current
 * ClickHouse accept.
 */
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client';
import { redactUrl, type Config } from '../config/index.js';
import { failureMessage, socketCode } from '../errors/errors.js';
import { clickhouseErrorCode, typedClickHouseError } from './errors.js';

/**
 * `readOnly`: the session is read-only (readonly=1, as `serve`'s user), so it
 * sends no setting; on a cluster its profile on the servers must carry
 * CLUSTER_READ_SETTINGS. `freshReplicas`: the worker's, whose reads through
 * the Distributed tables prefer a replica that is not far behind
 * (REPLICA_DELAY_LIMIT_S).
 */
export type ClickHouseSettings = Config['clickhouse'] & { readonly readOnly?: boolean; readonly freshReplicas?: boolean };

/**
 * What a read through the Distributed tables needs on a cluster: a server
 * asks every shard over the network even when it is one of them (18.16
 * refuses FINAL … ORDER BY read in-process: docs/architecture.md), and a
 * subquery over a Distributed table inside one (IN, JOIN) runs once, on the
 * server asked, its result sent to every shard (GLOBAL IN/JOIN): the same
 * answer as on one server, whatever table the subquery reads. A read-only
 * session cannot send them: the servers' profile sets them
 * (infra/clickhouse/cluster/reads.xml), and `serve` checks at start.
 */
export const CLUSTER_READ_SETTINGS = { prefer_localhost_replica: '0', distributed_product_mode: 'global' } as const;

/**
 * How far behind (seconds) a replica may be for the worker's reads through a
 * Distributed table to take it while a fresher one of its shard answers
 * (ClickHouse's absolute_delay: the age of the oldest part it has not
 * fetched). When none does, the least stale one answers
 * (fallback_to_stale_replicas_for_distributed_queries, ClickHouse's
 * default): on 18.16 the one replica left of a shard whose other replica
 * was SIGKILLed was refused as stale within seconds (code 369, seen in
 * cluster-faults.test.ts when the fallback was off), and refusing it would
 * stop the rollups for as long as the other is away. The sweeps look
 * back AGENTLEDGER_ROLLUP_LATE_MS each time, at least twice this on a
 * cluster (checked at start).
 */
export const REPLICA_DELAY_LIMIT_S = 60;

/**
 * And for a writer: an insert through a Distributed table is answered once
 * its rows are on a replica of their shard, not while they wait in a local
 * queue file.
 */
const CLUSTER_SETTINGS = {
  insert_distributed_sync: 1,
  prefer_localhost_replica: 0,
  distributed_product_mode: CLUSTER_READ_SETTINGS.distributed_product_mode,
} as const;

type ClientOptions = NonNullable<Parameters<typeof createClient>[0]>;

/** The ClickHouse settings a client of these settings sends. */
function sessionSettings(settings: ClickHouseSettings): ClientOptions['clickhouse_settings'] | undefined {
  if (settings.cluster === undefined || settings.readOnly === true) return undefined;
  return settings.freshReplicas === true ? { ...CLUSTER_SETTINGS, max_replica_delay_for_distributed_queries: String(REPLICA_DELAY_LIMIT_S) } : CLUSTER_SETTINGS;
}

/** The @clickhouse/client options for these settings; a private CA file is read here. */
export function clickhouseClientOptions(
  settings: ClickHouseSettings,
  database = settings.database,
  read: (path: string) => Buffer = (path) => readFileSync(path),
  requestTimeoutMs = 60_000,
): ClientOptions {
  const { url, user, password } = credentials(settings);
  const clickhouseSettings = sessionSettings(settings);
  return {
    url,
    username: user,
    password,
    database,
    request_timeout: requestTimeoutMs,
    compression: { request: false, response: false },
    application: 'agentledger',
    ...(clickhouseSettings === undefined ? {} : { clickhouse_settings: clickhouseSettings }),
    // Failures are reported by agentledger's own logger, with context.
    log: { level: ClickHouseLogLevel.OFF },
    ...(settings.caFile === undefined ? {} : { tls: { ca_cert: read(settings.caFile) } }),
  };
}

/**
 * The URL without its user-info, and the user and password to log in with.
 * A user or password in the URL wins over AGENTLEDGER_CLICKHOUSE_USER and
 * _PASSWORD (as @clickhouse/client would have it); taking them out here keeps
 * the password out of the client's URL and its "overridden" warnings.
 */
export function credentials(settings: Pick<ClickHouseSettings, 'url' | 'user' | 'password'>): { url: string; user: string; password: string } {
  const url = new URL(settings.url);
  const decode = (text: string): string => {
    try {
      return decodeURIComponent(text);
    } catch {
      return text; // a stray % is taken literally, as typed
    }
  };
  const user = url.username === '' ? settings.user : decode(url.username);
  const password = url.password === '' ? settings.password : decode(url.password);
  url.username = '';
  url.password = '';
  return { url: url.toString(), user, password };
}

/**
 * A client whose failures are typed where they arise (errors.ts: transient,
 * content or fatal by the server's code, carrying that code and the error as
 * `cause`), and name the service and what to check when the cause is not
 * the query: ClickHouse away, a refused login, or something else answering
 * at the URL.
 */
export function createClickHouse(settings: ClickHouseSettings, database = settings.database, requestTimeoutMs?: number): ClickHouseClient {
  const client = createClient(clickhouseClientOptions(settings, database, undefined, requestTimeoutMs));
  const explained = new Set<string | symbol>(['query', 'command', 'insert', 'exec']);
  return new Proxy(client, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      if (!explained.has(prop)) return (value as (...a: unknown[]) => unknown).bind(target);
      return (...args: unknown[]) =>
        (value as (...a: unknown[]) => Promise<unknown>).apply(target, args).then(
          (answer) => (prop === 'query' ? typedReads(answer) : answer),
          async (err: unknown) => {
            throw typedClickHouseError(await explainClickHouseError(err, settings));
          },
        );
    },
  });
}

/**
 * A query's result whose reads (json, text) fail typed too: a server that
 * fails mid-answer (18.16 writes the exception into the body) is a failed
 * request like any other.
 */
function typedReads(result: unknown): unknown {
  if (typeof result !== 'object' || result === null) return result;
  return new Proxy(result, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      if (prop !== 'json' && prop !== 'text') return (value as (...a: unknown[]) => unknown).bind(target);
      return (...args: unknown[]) =>
        (value as (...a: unknown[]) => Promise<unknown>).apply(target, args).catch((err: unknown) => {
          throw typedClickHouseError(err);
        });
    },
  });
}

/** A ClickHouse failure explained in one line; `code` and `cause` are the original's. */
export class ClickHouseUnavailableError extends Error {
  override readonly name = 'ClickHouseUnavailableError';
  readonly code: string | undefined;
  constructor(message: string, cause: unknown, code: unknown = (cause as { code?: unknown } | null)?.code) {
    super(message, { cause });
    this.code = typeof code === 'string' ? code : typeof code === 'number' ? String(code) : undefined;
  }
}

/** UNKNOWN_USER and WRONG_PASSWORD (18.16), AUTHENTICATION_FAILED (current ClickHouse). */
const LOGIN_CODES = new Set([192, 193, 516]);

/** Up to `max` characters of a reply, quoted, control characters escaped: what may go in a one-line error. */
export function quoteReply(body: string, max = 80): string {
  const head = body.length > max ? body.slice(0, max) : body;
  return JSON.stringify(head).replace(/[\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) + (body.length > max ? '…' : '');
}

/**
 * What answers `GET /ping` at the URL: ClickHouse (18.16 and current) says
 * "Ok.". Undefined when nothing answered, or ClickHouse did.
 */
export function pingReply(settings: ClickHouseSettings, timeoutMs = 3_000): Promise<{ status: number; body: string } | undefined> {
  return new Promise((resolve) => {
    let url: URL;
    try {
      url = new URL('/ping', settings.url);
    } catch {
      resolve(undefined);
      return;
    }
    url.username = '';
    url.password = '';
    const options = { timeout: timeoutMs, ...(settings.caFile === undefined ? {} : { ca: readFileSync(settings.caFile) }) };
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, options, (res) => {
      let body = '';
      res.setEncoding('latin1');
      res.on('data', (chunk: string) => {
        if (body.length < 1024) body += chunk;
      });
      res.on('end', () => resolve(res.statusCode === 200 && body === 'Ok.\n' ? undefined : { status: res.statusCode ?? 0, body }));
      res.on('error', () => resolve(undefined));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
    req.end();
  });
}

/** The one-line message for a reply that is not ClickHouse's. */
export function notClickHouseMessage(settings: ClickHouseSettings, reply: { status: number; body: string }): string {
  return `AGENTLEDGER_CLICKHOUSE_URL ${redactUrl(settings.url)} is not ClickHouse: GET /ping answered HTTP ${reply.status} ${quoteReply(reply.body)} (ClickHouse answers "Ok."): check the URL and port`;
}

/**
 * The error a caller sees for a failed request: a refused login, an
 * unreachable server and a server that is not ClickHouse are explained;
 * anything else is returned as it is.
 */
export async function explainClickHouseError(err: unknown, settings: ClickHouseSettings): Promise<unknown> {
  if (err instanceof ClickHouseUnavailableError) return err;
  const url = redactUrl(settings.url);
  const code = clickhouseErrorCode(err);
  if (code !== undefined && LOGIN_CODES.has(code)) {
    return new ClickHouseUnavailableError(
      `ClickHouse at ${url} refused user ${JSON.stringify(credentials(settings).user)}: authentication failed (code ${code}): check AGENTLEDGER_CLICKHOUSE_USER and AGENTLEDGER_CLICKHOUSE_PASSWORD (or the user and password in AGENTLEDGER_CLICKHOUSE_URL)`,
      err,
      code,
    );
  }
  if (code !== undefined) return err;
  const message = failureMessage(err);
  const unreachable = socketCode(err);
  if (unreachable !== undefined) {
    return new ClickHouseUnavailableError(`ClickHouse at ${url} did not answer (${message || unreachable}): check that it runs and AGENTLEDGER_CLICKHOUSE_URL`, err);
  }
  // No ClickHouse code and no socket error: whatever answered may not be ClickHouse at all.
  const reply = await pingReply(settings);
  return reply === undefined ? err : new ClickHouseUnavailableError(notClickHouseMessage(settings, reply), err);
}

/** Quotes an identifier for SQL text (18.16 has no query parameters for identifiers). */
export function quoteIdent(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`not a plain identifier: ${name}`);
  return '`' + name + '`';
}

/** Quotes a string literal for SQL text: 18.16 lacks `{name:Type}` query parameters. */
export function quoteString(value: string): string {
  return "'" + value.replace(/\\/g, '\\\\').replace(/'/g, "\\'") + "'";
}
