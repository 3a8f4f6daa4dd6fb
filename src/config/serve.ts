/** `agentledger serve`: the page and its read-only API (docs/dashboards.md "The page"). */
import { z } from 'zod';
import { hostName, httpUrlLike, port, secret, service, setting, userName } from './setting.js';

export const serve = service({
  title: 'The page (agentledger serve)',
  vars: {
    AGENTLEDGER_SERVE_PORT: setting(port(1).default(8080), 'Port `agentledger serve` listens on (`--port` wins).'),
    AGENTLEDGER_SERVE_HOST: setting(hostName.default('127.0.0.1'), 'Address `agentledger serve` listens on (`--host` wins); the default is this host only.'),
    AGENTLEDGER_SERVE_TOKEN: secret(
      z.string().min(16, 'expected at least 16 characters').optional(),
      `When set, \`agentledger serve\` answers only requests carrying it: the header
       \`Authorization: Bearer <token>\`, or basic auth with it as the password (any
       user name; the browser asks once). At least 16 characters. Never printed.`,
      { unset: 'no token' },
    ),
    AGENTLEDGER_SERVE_PUBLIC_URL: setting(
      httpUrlLike('https://agentledger.example.com').optional(),
      'The address people open the page at (behind a proxy, its public one): the link (`generatorURL`) of each alert pushed to Alertmanager.',
      { show: 'url', unset: 'alerts pushed without a link' },
    ),
    AGENTLEDGER_SERVE_CLICKHOUSE_USER: setting(
      userName.default('agentledger_dashboard'),
      'The ClickHouse user `serve` reads as: a read-only one (`serve` refuses a user that may write). The default is the local stack\'s.',
    ),
    AGENTLEDGER_SERVE_CLICKHOUSE_PASSWORD: secret(
      z.string().default('agentledger_dashboard'),
      'Password of `AGENTLEDGER_SERVE_CLICKHOUSE_USER`; the default is the local stack\'s. Never printed.',
    ),
  },
  config: (e) => ({
    /** `agentledger serve`: where it listens, its token (undefined: none), the read-only ClickHouse user it reads as. */
    serve: {
      port: e.AGENTLEDGER_SERVE_PORT,
      host: e.AGENTLEDGER_SERVE_HOST,
      token: e.AGENTLEDGER_SERVE_TOKEN,
      /** The page's public address (undefined: unset), for the alerts' links. */
      publicUrl: e.AGENTLEDGER_SERVE_PUBLIC_URL,
      clickhouse: { user: e.AGENTLEDGER_SERVE_CLICKHOUSE_USER, password: e.AGENTLEDGER_SERVE_CLICKHOUSE_PASSWORD },
    },
  }),
  redacts: {
    'serve.token': ['AGENTLEDGER_SERVE_TOKEN'],
    'serve.publicUrl': ['AGENTLEDGER_SERVE_PUBLIC_URL'],
    'serve.clickhouse.password': ['AGENTLEDGER_SERVE_CLICKHOUSE_PASSWORD'],
  },
});
