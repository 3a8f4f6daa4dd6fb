import type { Server } from 'node:http';
import type { ClickHouseClient } from '@clickhouse/client';
import { CLUSTER_READ_SETTINGS, createClickHouse } from '../clickhouse/client.js';
import { sessionReadonly, sessionSettings } from '../clickhouse/server.js';
import { addressInUse } from '../errors/errors.js';
import { createServeMetrics, serveMetrics, type ServeMetrics } from '../observability/metrics.js';
import { pageEndpoints } from '../serve/endpoints.js';
import { createServeServer, RequestError, type ApiCommand } from '../serve/server.js';
import { alertsCommand } from './alerts.js';
import type { Command, CommandContext } from './command.js';
import { parseOptions, UsageError, wholeNumberOption } from './command.js';
import { loopsCommand } from './loops.js';
import { reportCommand } from './report.js';
import { sessionsCommand } from './sessions.js';
import { spendCommand } from './spend.js';

/** The commands whose `--json` output `serve` answers at /api/<name>. */
export const API_COMMANDS: readonly Command[] = [spendCommand, loopsCommand, sessionsCommand, alertsCommand, reportCommand];

/**
 * A command for the API: run as the CLI runs it, its output lines collected
 * (each with its newline, as stdout has them), a usage mistake a 400.
 */
export function apiCommand(command: Command, context: Omit<CommandContext, 'out'>): ApiCommand {
  return {
    name: command.name,
    async output(args) {
      const lines: string[] = [];
      let code: number;
      try {
        code = await command.run(args, { ...context, out: (line) => void lines.push(line) });
      } catch (err) {
        if (err instanceof UsageError) throw new RequestError(400, `${command.name}: ${err.message}`);
        throw err;
      }
      if (code !== 0) throw new Error(`${command.name} ended with exit code ${code}`);
      return lines.map((line) => line + '\n').join('');
    },
  };
}

export const serveCommand: Command = {
  name: 'serve',
  longRunning: true,
  summary: 'serve the page (spend, loops, alerts, violations) and its read-only JSON API',
  help: `Usage: agentledger serve [--port N] [--host H] [--stop-after-ms N]

Serves a page of what is stored, for a browser, and the JSON API it reads,
until SIGTERM or SIGINT. It reads ClickHouse as the read-only user
AGENTLEDGER_SERVE_CLICKHOUSE_USER (agentledger_dashboard), and Redis for the
alerts' failed deliveries. docs/dashboards.md "The page" lists the endpoints.

  GET /                       the page (times in UTC)
  GET /api/spend?by=model     what \`agentledger spend --json --by model\` prints,
                              byte for byte; likewise /api/loops, /api/sessions,
                              /api/alerts and /api/report with their options
  GET /api/overview, /api/series, /api/tree, /api/violations, /api/reconciliation
                              what the page needs beyond those

A bad option is a 400 with one line of JSON ({"error": "..."}); only GET and
HEAD are answered. With AGENTLEDGER_SERVE_TOKEN set every request needs it:
\`Authorization: Bearer <token>\`, or basic auth with the token as password
(the browser asks once). Bound to a loopback address (the default), only a
loopback Host header is answered. Its Prometheus metrics (requests and
latency per endpoint) are on another port, AGENTLEDGER_SERVE_METRICS_PORT
(9466; 0: none), at /metrics.

  --port N           port (default AGENTLEDGER_SERVE_PORT, 8080; 0: any free one)
  --host H           address to listen on (default AGENTLEDGER_SERVE_HOST, 127.0.0.1)
  --stop-after-ms N  stop by itself after N ms, as on SIGTERM (demos, tests)`,
  async run(args, { config, log }) {
    const { values } = parseOptions(args, { port: { type: 'string' }, host: { type: 'string' }, 'stop-after-ms': { type: 'string' } });
    const port = values.port === undefined ? config.serve.port : wholeNumberOption('port', values.port, 0);
    if (port > 65535) throw new UsageError(`--port expects a port number 0-65535, got ${port}`);
    const host = values.host ?? config.serve.host;
    if (!/^[A-Za-z0-9.:_-]{1,253}$/.test(host)) throw new UsageError(`--host expects a host name or IP address, got ${JSON.stringify(host)}`);
    const stopAfterMs = values['stop-after-ms'] === undefined ? undefined : wholeNumberOption('stop-after-ms', values['stop-after-ms'], 1);
    // Every read, the commands' and the page's, as the read-only user.
    const readOnly = { ...config, clickhouse: { ...config.clickhouse, ...config.serve.clickhouse, readOnly: true } };
    const ch = createClickHouse(readOnly.clickhouse);
    // The page and its API never write; a user that could is a wrong setting.
    if ((await sessionReadonly(ch)) === 0) {
      await ch.close();
      throw new UsageError(
        `AGENTLEDGER_SERVE_CLICKHOUSE_USER=${readOnly.clickhouse.user} may write to ClickHouse (readonly=0): serve reads as a read-only user (readonly=1, as the local stack's agentledger_dashboard)`,
      );
    }
    if (config.clickhouse.cluster !== undefined) await checkClusterProfile(ch, readOnly.clickhouse.user, config.clickhouse.cluster);
    const metrics = createServeMetrics();
    const metricsServer = await startMetrics(metrics, config.serveMetricsPort, config.metricsHost, ch);
    const server = createServeServer({
      commands: API_COMMANDS.map((c) => apiCommand(c, { config: readOnly, log })),
      endpoints: pageEndpoints(ch),
      log,
      token: config.serve.token,
      host,
      observe(endpoint, status, seconds) {
        metrics.requests.inc({ endpoint, status: String(status) });
        metrics.requestSeconds.observe({ endpoint }, seconds);
      },
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err: NodeJS.ErrnoException) => {
        metricsServer?.close();
        reject(addressInUse(err) ? new UsageError(`${host}:${port} is in use (--port or AGENTLEDGER_SERVE_PORT)`) : err);
      });
      server.listen(port, host, resolve);
    });
    const address = server.address();
    const bound = typeof address === 'object' && address !== null ? address.port : port;
    const shown = host.includes(':') ? `[${host}]` : host;
    log.info('serving', { url: `http://${shown}:${bound}/`, clickhouseUser: readOnly.clickhouse.user, auth: config.serve.token === undefined ? 'none' : 'token' });
    await untilStopped(server, stopAfterMs);
    metricsServer?.close();
    await ch.close();
    log.info('stopped serving');
    return 0;
  },
};

/** serve's `/metrics` on AGENTLEDGER_SERVE_METRICS_PORT (0: none); a port in use is a usage error naming it. */
async function startMetrics(metrics: ServeMetrics, port: number, host: string, ch: ClickHouseClient): Promise<Server | undefined> {
  if (port === 0) return undefined;
  try {
    return await serveMetrics(metrics, port, host);
  } catch (err) {
    await ch.close();
    if (addressInUse(err)) throw new UsageError(`${host}:${port} is in use (AGENTLEDGER_SERVE_METRICS_PORT; 0 turns serve's metrics off)`);
    throw err;
  }
}

/** Waits for SIGTERM, SIGINT or stopAfterMs, then closes the server (open connections get 2 s). */
async function untilStopped(server: Server, stopAfterMs: number | undefined): Promise<void> {
  await new Promise<void>((resolve) => {
    const timer = stopAfterMs === undefined ? undefined : setTimeout(resolve, stopAfterMs);
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
    server.once('close', () => {
      if (timer) clearTimeout(timer);
    });
  });
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const force = setTimeout(() => server.closeAllConnections(), 2000);
  await closed;
  clearTimeout(force);
}

/**
 * On a cluster the read-only user cannot send the settings its reads through
 * the Distributed tables need (client.ts, CLUSTER_READ_SETTINGS): its
 * profile on the servers must carry them, or some pages fail (code 288,
 * a subquery over a Distributed table) or, on 18.16, FINAL reads are refused.
 */
async function checkClusterProfile(ch: ClickHouseClient, user: string, cluster: string): Promise<void> {
  const have = await sessionSettings(ch, Object.keys(CLUSTER_READ_SETTINGS));
  const wrong = Object.entries(CLUSTER_READ_SETTINGS).filter(([name, value]) => have.get(name) !== value);
  if (wrong.length === 0) return;
  await ch.close();
  throw new UsageError(
    `AGENTLEDGER_SERVE_CLICKHOUSE_USER=${user}: on cluster ${cluster} its profile must set ${wrong.map(([n, v]) => `${n}=${v}`).join(' and ')} (it has ${wrong.map(([n]) => `${n}=${have.get(n) ?? 'none'}`).join(', ')}; a read-only user cannot set them itself: infra/clickhouse/cluster/reads.xml, docs/topology.md)`,
  );
}
