/**
 * Where integration tests get Kafka, ClickHouse and Redis from:
 * - testcontainers, when a Docker engine is reachable;
 * - otherwise the project's local stack (infra/stack.sh), started if it is down.
 * AGENTLEDGER_TEST_SERVICES=local|containers forces one of them.
 *
 * Either way the tests talk to real servers; nothing here is a mock.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createConnection, createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

export interface Services {
  readonly kind: 'local' | 'containers';
  readonly kafkaBrokers: string;
  readonly clickhouseUrl: string;
  readonly clickhouseUser: string;
  readonly clickhousePassword: string;
  readonly redisUrl: string;
  stop(): Promise<void>;
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
      new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), 10_000)),
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
  return {
    kind: 'local',
    kafkaBrokers: '127.0.0.1:9092',
    clickhouseUrl: 'http://127.0.0.1:8123',
    clickhouseUser: 'agentledger',
    clickhousePassword: 'agentledger',
    redisUrl: 'redis://127.0.0.1:6379',
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
  const clickhouse = await new GenericContainer('clickhouse/clickhouse-server:25.8')
    .withExposedPorts(8123)
    .withEnvironment({ CLICKHOUSE_DB: 'agentledger', CLICKHOUSE_USER: 'agentledger', CLICKHOUSE_PASSWORD: 'agentledger' })
    .withWaitStrategy(Wait.forHttp('/ping', 8123))
    .start();
  const redis = await new GenericContainer('redis:7')
    .withCommand(['redis-server', '--appendonly', 'yes'])
    .withExposedPorts(6379)
    .withWaitStrategy(Wait.forLogMessage(/Ready to accept connections/))
    .start();
  return {
    kind: 'containers',
    kafkaBrokers: `localhost:${kafkaPort}`,
    clickhouseUrl: `http://${clickhouse.getHost()}:${clickhouse.getMappedPort(8123)}`,
    clickhouseUser: 'agentledger',
    clickhousePassword: 'agentledger',
    redisUrl: `redis://${redis.getHost()}:${redis.getMappedPort(6379)}`,
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
