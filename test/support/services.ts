/**
 * Where integration tests get Kafka, ClickHouse and Redis from:
 * - testcontainers, when a Docker engine is reachable;
 * - otherwise the project's local stack (infra/stack.sh), started if it is down.
 * AGENTLEDGER_TEST_SERVICES=local|containers forces one of them.
 *
 * Either way the tests talk to real servers; nothing here is a mock.
 *
 * Tests connect to ClickHouse as `agentledger_test`, a user with rights on
 * every database: each test file works in a throwaway database of its own
 * (test/support/context.ts), and the deployment's users are confined to
 * agentledger's database by exact name (allow_databases), so they cannot reach
 * those. `deployment` names the real users and the real database, which
 * test/integration/least-privilege.test.ts checks.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createConnection, createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

export interface Credentials {
  readonly user: string;
  readonly password: string;
}

/** agentledger's least-privileged ClickHouse users (infra/clickhouse/users.d/agentledger.xml) and their database. */
export interface Deployment {
  readonly database: string;
  readonly writer: Credentials;
  readonly migrator: Credentials;
  readonly dashboard: Credentials;
}

export interface Services {
  readonly kind: 'local' | 'containers';
  readonly kafkaBrokers: string;
  readonly clickhouseUrl: string;
  /** The tests' own user, with rights on every database. */
  readonly clickhouseUser: string;
  readonly clickhousePassword: string;
  readonly deployment: Deployment;
  /** Redis with the credentials of agentledger's ACL user in it. */
  readonly redisUrl: string;
  /** The same Redis without credentials. */
  readonly redisAnonymousUrl: string;
  stop(): Promise<void>;
}

const TEST_USER: Credentials = { user: 'agentledger_test', password: 'agentledger_test' };
/** readonly=1 on every database: what `agentledger serve` reads the tests' databases as. */
export const TEST_READONLY_USER: Credentials = { user: 'agentledger_test_readonly', password: 'agentledger_test_readonly' };
const REDIS_USER = 'agentledger';

/**
 * The deployment's credentials: the variables infra/stack.sh and
 * docker-compose.yml write into the users file, with the same defaults.
 */
function deploymentFrom(env: NodeJS.ProcessEnv): Deployment & { readonly redisPassword: string } {
  const or = (key: string, fallback: string): string => env[key] || fallback;
  return {
    database: or('AGENTLEDGER_CLICKHOUSE_DATABASE', 'agentledger'),
    writer: { user: 'agentledger', password: or('AGENTLEDGER_CLICKHOUSE_PASSWORD', 'agentledger') },
    migrator: { user: 'agentledger_migrator', password: or('AGENTLEDGER_CLICKHOUSE_MIGRATOR_PASSWORD', 'agentledger_migrator') },
    dashboard: { user: 'agentledger_dashboard', password: or('AGENTLEDGER_CLICKHOUSE_DASHBOARD_PASSWORD', 'agentledger_dashboard') },
    redisPassword: or('AGENTLEDGER_REDIS_PASSWORD', 'agentledger'),
  };
}

function redisUrls(hostPort: string, password: string): { redisUrl: string; redisAnonymousUrl: string } {
  return { redisUrl: `redis://${REDIS_USER}:${encodeURIComponent(password)}@${hostPort}`, redisAnonymousUrl: `redis://${hostPort}` };
}

export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

function portOpen(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host });
    socket.setTimeout(1000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function dockerReachable(): Promise<boolean> {
  if (!process.env['DOCKER_HOST'] && !existsSync('/var/run/docker.sock')) return false;
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await Promise.race([
      getContainerRuntimeClient(),
      new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), 10_000).unref()),
    ]);
    return true;
  } catch {
    return false;
  }
}

async function localStack(): Promise<Services> {
  const up = (await Promise.all([portOpen(9092), portOpen(8123), portOpen(6379)])).every(Boolean);
  if (!up) {
    const result = spawnSync('bash', [`${REPO_ROOT}infra/stack.sh`, 'up'], { stdio: ['ignore', 'inherit', 'inherit'] });
    if (result.status !== 0) throw new Error(`infra/stack.sh up failed with exit code ${result.status}`);
  }
  const { redisPassword, ...deployment } = deploymentFrom(process.env);
  return {
    kind: 'local',
    kafkaBrokers: '127.0.0.1:9092',
    clickhouseUrl: 'http://127.0.0.1:8123',
    clickhouseUser: TEST_USER.user,
    clickhousePassword: TEST_USER.password,
    deployment,
    ...redisUrls('127.0.0.1:6379', redisPassword),
    stop: () => Promise.resolve(),
  };
}

async function containers(): Promise<Services> {
  const { GenericContainer, Wait } = await import('testcontainers');
  const kafkaPort = await freePort();
  const kafka = await new GenericContainer('apache/kafka:4.1.1')
    .withExposedPorts({ container: 9092, host: kafkaPort })
    .withEnvironment({
      KAFKA_NODE_ID: '1',
      KAFKA_PROCESS_ROLES: 'broker,controller',
      KAFKA_LISTENERS: 'PLAINTEXT://:9092,CONTROLLER://:9093',
      KAFKA_ADVERTISED_LISTENERS: `PLAINTEXT://localhost:${kafkaPort}`,
      KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
      KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
      KAFKA_CONTROLLER_QUORUM_VOTERS: '1@localhost:9093',
      KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: '1',
      KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: '0',
      KAFKA_AUTO_CREATE_TOPICS_ENABLE: 'false',
      KAFKA_MESSAGE_MAX_BYTES: '16777216',
    })
    .withWaitStrategy(Wait.forLogMessage(/Kafka Server started/))
    .start();
  const { redisPassword, ...deployment } = deploymentFrom({});
  // As docker-compose.yml sets it up, plus the tests' user.
  const clickhouse = await new GenericContainer('clickhouse/clickhouse-server:25.8')
    .withExposedPorts(8123)
    .withEnvironment({
      CLICKHOUSE_DB: deployment.database,
      AGENTLEDGER_CLICKHOUSE_DATABASE: deployment.database,
      AGENTLEDGER_CLICKHOUSE_PASSWORD: deployment.writer.password,
      AGENTLEDGER_CLICKHOUSE_MIGRATOR_PASSWORD: deployment.migrator.password,
      AGENTLEDGER_CLICKHOUSE_DASHBOARD_PASSWORD: deployment.dashboard.password,
    })
    .withCopyFilesToContainer([
      { source: `${REPO_ROOT}infra/clickhouse/users.d/agentledger.xml`, target: '/etc/clickhouse-server/users.d/agentledger.xml' },
      { source: `${REPO_ROOT}infra/clickhouse/docker-dashboard-settings.xml`, target: '/etc/clickhouse-server/users.d/docker-dashboard-settings.xml' },
      { source: `${REPO_ROOT}infra/clickhouse/docker-networks.xml`, target: '/etc/clickhouse-server/users.d/docker-networks.xml' },
    ])
    .withCopyContentToContainer([
      {
        content:
          `<clickhouse><profiles><test_readonly><readonly>1</readonly></test_readonly></profiles><users>` +
          `<${TEST_USER.user}><password>${TEST_USER.password}</password><networks><ip>::/0</ip></networks><profile>default</profile><quota>default</quota></${TEST_USER.user}>` +
          `<${TEST_READONLY_USER.user}><password>${TEST_READONLY_USER.password}</password><networks><ip>::/0</ip></networks><profile>test_readonly</profile><quota>default</quota></${TEST_READONLY_USER.user}>` +
          `</users></clickhouse>`,
        target: '/etc/clickhouse-server/users.d/test-user.xml',
      },
    ])
    .withWaitStrategy(Wait.forHttp('/ping', 8123))
    .start();
  const redis = await new GenericContainer('redis:7')
    // As docker-compose.yml runs it.
    .withCommand(['redis-server', '--appendonly', 'yes', '--user', 'default', 'off', '--user', REDIS_USER, 'on', `>${redisPassword}`, '~*', '+@all', '-@dangerous', '+info', '+config|get'])
    .withExposedPorts(6379)
    .withWaitStrategy(Wait.forLogMessage(/Ready to accept connections/))
    .start();
  return {
    kind: 'containers',
    kafkaBrokers: `localhost:${kafkaPort}`,
    clickhouseUrl: `http://${clickhouse.getHost()}:${clickhouse.getMappedPort(8123)}`,
    clickhouseUser: TEST_USER.user,
    clickhousePassword: TEST_USER.password,
    deployment,
    ...redisUrls(`${redis.getHost()}:${redis.getMappedPort(6379)}`, redisPassword),
    async stop() {
      await Promise.all([kafka.stop(), clickhouse.stop(), redis.stop()]);
    },
  };
}

let shared: Promise<Services> | undefined;

/** The services for this test process (started once per process). */
export function services(): Promise<Services> {
  shared ??= (async () => {
    const forced = process.env['AGENTLEDGER_TEST_SERVICES'];
    if (forced === 'containers' || (forced !== 'local' && (await dockerReachable()))) return containers();
    return localStack();
  })();
  return shared;
}
