/**
 * `agentledger serve`: the page and its read-only JSON API over one node:http
 * server (docs/dashboards.md "The page").
 *
 * - `GET /api/<command>?<option>=<value>…` for the read commands (spend, loops,
 *   sessions, alerts, report) runs the command itself with `--json` and those
 *   options, so the body is byte for byte what the command prints.
 * - `GET /api/<endpoint>` for what the page needs beyond them (endpoints.ts).
 * - `GET /` and `/assets/…`: the page, from a fixed list of files.
 *
 * Safe by default: GET and HEAD only; when bound to a loopback address only a
 * loopback Host header is answered (a web page elsewhere cannot reach the API
 * through DNS rebinding); with a token, nothing without it; a
 * Content-Security-Policy that allows this origin's own scripts and styles and
 * nothing else; errors are one line of JSON, never a stack trace.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { gzipSync } from 'node:zlib';
import { failureMessage } from '../errors/errors.js';
import type { Logger } from '../observability/logger.js';
import { PAGE_ASSETS, type PageAsset } from './assets.js';

/** What an endpoint of the page answers with: a value written as JSON, or a client mistake. */
export type EndpointHandler = (query: URLSearchParams) => Promise<unknown>;

/**
 * A read command as the API runs it: its output for these arguments (which
 * start with `--json`), or a RequestError(400) for a usage mistake.
 */
export interface ApiCommand {
  readonly name: string;
  output(args: string[]): Promise<string>;
}

export interface ServeOptions {
  /** The read commands served as `/api/<name>`. */
  readonly commands: readonly ApiCommand[];
  /** The page's further endpoints, `/api/<name>`. */
  readonly endpoints: Readonly<Record<string, EndpointHandler>>;
  readonly log: Logger;
  /** Requests must carry it (bearer or basic auth password); undefined: no auth. */
  readonly token: string | undefined;
  /** The address the server listens on: a loopback one turns the Host check on. */
  readonly host: string;
  /**
   * Told of every answered request: its endpoint (`/api/<name>` or an asset's
   * path when it exists, else `other`: a bounded set), status and seconds.
   */
  readonly observe?: (endpoint: string, status: number, seconds: number) => void;
}

/** A mistake in a request: its status and one line for the client. */
export class RequestError extends Error {
  override readonly name = 'RequestError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-resource-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
};

/** An option name as a query key: lower case words joined by `-`, as the commands name them. */
const OPTION_NAME = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;

/**
 * The command line a query stands for: `--json`, then `--key value` per
 * parameter in order (`?key` or `?key=` alone: `--key`, a flag). A key given
 * twice or not shaped like an option, or `json` itself, is a 400; an option the
 * command does not know is the command's own usage error, also a 400.
 */
export function commandArgs(query: URLSearchParams): string[] {
  const args = ['--json'];
  const seen = new Set<string>();
  for (const [key, value] of query) {
    if (!OPTION_NAME.test(key) || key.length > 40) throw new RequestError(400, `${JSON.stringify(key.slice(0, 40))} is not an option name`);
    if (key === 'json') throw new RequestError(400, 'json is implied: the API always answers JSON');
    if (seen.has(key)) throw new RequestError(400, `${key} given twice`);
    seen.add(key);
    args.push(`--${key}`);
    if (value !== '') args.push(value);
  }
  return args;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** The token a request carries: `Authorization: Bearer T` or basic auth with password T. */
function presentedToken(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (header === undefined) return undefined;
  const [scheme, value] = header.split(' ', 2);
  if (value === undefined) return undefined;
  if (scheme?.toLowerCase() === 'bearer') return value.trim();
  if (scheme?.toLowerCase() === 'basic') {
    const decoded = Buffer.from(value.trim(), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return colon < 0 ? undefined : decoded.slice(colon + 1);
  }
  return undefined;
}

/** Compares digests, so neither the length nor the content of the token leaks through timing. */
function authorized(req: IncomingMessage, token: string | undefined): boolean {
  if (token === undefined) return true;
  const given = presentedToken(req);
  return given !== undefined && timingSafeEqual(digest(given), digest(token));
}

function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  return bare === 'localhost' || bare === '::1' || (isIP(bare) === 4 && bare.startsWith('127.'));
}

/** The host part of a Host header (`127.0.0.1:8080`, `[::1]:8080`, `localhost`). */
function hostOf(header: string): string {
  const m = /^(\[[^\]]*\]|[^:]*)(?::\d+)?$/.exec(header);
  return m?.[1] ?? header;
}

function send(res: ServerResponse, status: number, type: string, body: Buffer | string, extra: Record<string, string> = {}): void {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type, 'content-length': String(bytes.length), ...extra });
  res.end(res.req.method === 'HEAD' ? undefined : bytes);
}

function sendJson(res: ServerResponse, status: number, body: string): void {
  send(res, status, 'application/json; charset=utf-8', body, { 'cache-control': 'no-store' });
}

function sendError(res: ServerResponse, status: number, message: string, extra: Record<string, string> = {}): void {
  const body = JSON.stringify({ error: message.replace(/\s*\n\s*/g, ' ') }) + '\n';
  send(res, status, 'application/json; charset=utf-8', body, { 'cache-control': 'no-store', ...extra });
}

/** An asset's bytes, read once, and gzipped once when that is smaller. */
interface LoadedAsset {
  readonly type: string;
  readonly plain: Buffer;
  readonly gzipped: Buffer | undefined;
}

function loadAsset(asset: PageAsset): LoadedAsset {
  const plain = readFileSync(asset.file);
  const gzipped = gzipSync(plain, { level: 9 });
  return { type: asset.type, plain, gzipped: gzipped.length < plain.length ? gzipped : undefined };
}

export function createServeServer(options: ServeOptions): Server {
  const { commands, endpoints, log, token, host, observe } = options;
  const assets = new Map<string, LoadedAsset>();
  for (const [path, asset] of Object.entries(PAGE_ASSETS)) assets.set(path, loadAsset(asset));
  const byName = new Map(commands.map((c) => [c.name, c]));
  const checkHost = isLoopback(host);

  async function api(name: string, query: URLSearchParams, res: ServerResponse): Promise<void> {
    const command = byName.get(name);
    if (command) {
      sendJson(res, 200, await command.output(commandArgs(query)));
      return;
    }
    const endpoint = Object.hasOwn(endpoints, name) ? endpoints[name] : undefined;
    if (!endpoint) throw new RequestError(404, `no endpoint /api/${name}`);
    sendJson(res, 200, JSON.stringify(await endpoint(query)) + '\n');
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      sendError(res, 405, `${req.method ?? '?'} is not allowed: this server is read-only (GET, HEAD)`, { allow: 'GET, HEAD' });
      return;
    }
    if (checkHost && !isLoopback(hostOf(req.headers.host ?? ''))) {
      sendError(res, 421, 'this server answers requests for 127.0.0.1 and localhost only (it listens on a loopback address)');
      return;
    }
    if (!authorized(req, token)) {
      sendError(res, 401, 'a token is required (Authorization: Bearer, or basic auth with the token as password)', {
        'www-authenticate': 'Basic realm="agentledger", charset="UTF-8"',
      });
      return;
    }
    const url = new URL(req.url ?? '/', 'http://serve.invalid');
    if (url.pathname.startsWith('/api/')) {
      await api(url.pathname.slice('/api/'.length), url.searchParams, res);
      return;
    }
    const asset = assets.get(url.pathname);
    if (!asset) {
      sendError(res, 404, `nothing at ${url.pathname.slice(0, 200)}`);
      return;
    }
    const gzip = asset.gzipped !== undefined && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    send(res, 200, asset.type, gzip && asset.gzipped ? asset.gzipped : asset.plain, {
      'cache-control': 'no-cache',
      vary: 'accept-encoding',
      ...(gzip ? { 'content-encoding': 'gzip' } : {}),
    });
  }

  /** The endpoint a path names, or `other`: a metric label no request can multiply. */
  function endpointOf(url: string | undefined): string {
    let path: string;
    try {
      path = new URL(url ?? '/', 'http://serve.invalid').pathname;
    } catch {
      return 'other';
    }
    if (!path.startsWith('/api/')) return assets.has(path) ? path : 'other';
    const name = path.slice('/api/'.length);
    return byName.has(name) || Object.hasOwn(endpoints, name) ? path : 'other';
  }

  return createServer((req, res) => {
    const started = Date.now();
    if (observe) res.once('finish', () => observe(endpointOf(req.url), res.statusCode, (Date.now() - started) / 1000));
    handle(req, res)
      .catch((err: unknown) => {
        if (err instanceof RequestError) {
          sendError(res, err.status, err.message);
          return;
        }
        const message = failureMessage(err);
        log.error('serve: request failed', { path: (req.url ?? '').slice(0, 200), error: message });
        if (!res.headersSent) sendError(res, 503, message);
        else res.destroy();
      })
      .finally(() => log.debug('serve: request', { method: req.method, path: (req.url ?? '').slice(0, 200), status: res.statusCode, ms: Date.now() - started }));
  });
}
