/** Metrics endpoints and logs. */
import { z } from 'zod';
import { hostName, msOrOff, port, service, setting } from './setting.js';

export const observability = service({
  title: 'Metrics and logs',
  vars: {
    AGENTLEDGER_METRICS_PORT: setting(port(0).default(9464), 'Port of `ingest`\'s Prometheus `/metrics` endpoint; `0` turns it off.'),
    AGENTLEDGER_WORKER_METRICS_PORT: setting(
      port(0).default(9465),
      'Port of `agentledger worker`\'s Prometheus `/metrics` endpoint; `0` turns it off. A second worker on one host needs another.',
    ),
    AGENTLEDGER_SERVE_METRICS_PORT: setting(
      port(0).default(9466),
      'Port of `agentledger serve`\'s Prometheus `/metrics` endpoint (apart from the page\'s port, so the page\'s token does not guard it); `0` turns it off.',
    ),
    AGENTLEDGER_METRICS_HOST: setting(
      hostName.default('127.0.0.1'),
      'Address the metrics endpoints listen on (GET only): the default is this host only; `0.0.0.0` for a scraper on another host.',
    ),
    AGENTLEDGER_FROZEN_LOOP_EXIT_MS: setting(
      msOrOff(3_600_000).default(60_000),
      `The frozen-loop guard of \`ingest\`, \`worker\` and \`serve\`: when the process's
       event loop has not turned for this long, in ms (code that never yields, a
       promise chain spinning; then no timer, socket or signal handler runs), a thread
       of its own writes one error line and SIGKILLs the process for its supervisor to
       restart it. \`0\` turns it off; else from 1000 to 3600000.`,
    ),
    AGENTLEDGER_LOG_LEVEL: setting(z.enum(['debug', 'info', 'warn', 'error']).default('info'), '`debug`, `info`, `warn` or `error`; logs go to stderr.'),
    AGENTLEDGER_LOG_FORMAT: setting(
      z.enum(['auto', 'text', 'json']).default('auto'),
      '`json`: one JSON object per line (`level`, `time` in ISO 8601 UTC, `msg`, then the fields), for a log shipper; `text`: `time LEVEL message key=value …`; `auto`: text when stderr is a terminal, else JSON.',
    ),
  },
  config: (e) => ({
    metricsPort: e.AGENTLEDGER_METRICS_PORT,
    /** The worker's metrics port (0: off). */
    workerMetricsPort: e.AGENTLEDGER_WORKER_METRICS_PORT,
    /** serve's metrics port (0: off). */
    serveMetricsPort: e.AGENTLEDGER_SERVE_METRICS_PORT,
    metricsHost: e.AGENTLEDGER_METRICS_HOST,
    logLevel: e.AGENTLEDGER_LOG_LEVEL,
    logFormat: e.AGENTLEDGER_LOG_FORMAT,
    /** AGENTLEDGER_FROZEN_LOOP_EXIT_MS (0: off). */
    frozenLoopExitMs: e.AGENTLEDGER_FROZEN_LOOP_EXIT_MS,
  }),
});
