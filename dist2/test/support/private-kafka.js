/**
 * A Kafka broker of a test file's own: the jars of the local stack
 * (.state/kafka-libs), a KRaft broker+controller on free ports of 127.0.0.1
 * with its own folder, so the test can kill and restart it at the moment it
 * chooses without disturbing the stack's broker that other tests use.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { closedPort } from './cli-run.js';
import { sleep } from './processes.js';
import { REPO_ROOT } from './services.js';
const LIBS = join(REPO_ROOT, '.state', 'kafka-libs');
/** Whether the local stack's Kafka jars are there to run a broker of one's own. */
export const privateKafkaAvailable = () => existsSync(LIBS);
export async function privateKafka(name) {
    const port = await closedPort();
    const controller = await closedPort();
    const dir = join(REPO_ROOT, '.state', 'test-kafka', `${name}-${randomBytes(3).toString('hex')}`);
    mkdirSync(join(dir, 'data'), { recursive: true });
    const template = readFileSync(join(REPO_ROOT, 'infra', 'kafka', 'server.properties.in'), 'utf8');
    const properties = join(dir, 'server.properties');
    writeFileSync(properties, template
        .replaceAll('@DATA_DIR@', join(dir, 'data'))
        .replaceAll('9092', String(port))
        .replaceAll('9093', String(controller)));
    const java = (args) => spawn('java', ['-Xms128m', '-Xmx384m', '-Djava.awt.headless=true', `-Dlog4j2.configurationFile=${join(REPO_ROOT, 'infra', 'kafka', 'log4j2.xml')}`, `-Dkafka.log.file=${join(dir, 'kafka.log')}`, '-cp', `${LIBS}/*`, ...args], {
        stdio: ['ignore', 'ignore', 'pipe'],
    });
    // A cluster id is 16 random bytes, base64url without padding.
    const format = java(['kafka.tools.StorageTool', 'format', '-t', randomBytes(16).toString('base64url'), '-c', properties]);
    let formatErr = '';
    format.stderr?.on('data', (d) => (formatErr += d.toString()));
    const formatted = await new Promise((r) => format.once('exit', r));
    if (formatted !== 0)
        throw new Error(`kafka storage format failed (${formatted}): ${formatErr}`);
    const brokers = `127.0.0.1:${port}`;
    let broker;
    const answers = async () => {
        const admin = new Kafka({ clientId: 'test-private-kafka', brokers: [brokers], logLevel: logLevel.NOTHING, connectionTimeout: 1000, requestTimeout: 3000, retry: { retries: 0 } }).admin();
        try {
            await admin.connect();
            await admin.listTopics();
            return true;
        }
        catch {
            return false;
        }
        finally {
            await admin.disconnect().catch(() => undefined);
        }
    };
    const start = async () => {
        const child = java(['kafka.Kafka', properties]);
        child.stderr?.resume();
        broker = child;
        // A test process that ends in any way takes its broker with it.
        const reap = () => void child.kill('SIGKILL');
        process.once('exit', reap);
        child.once('exit', () => process.removeListener('exit', reap));
        const deadline = Date.now() + 90_000;
        while (!(await answers())) {
            if (child.exitCode !== null)
                throw new Error(`the private broker exited with ${child.exitCode}; see ${join(dir, 'kafka.log')}`);
            if (Date.now() > deadline)
                throw new Error(`the private broker did not answer in 90 s; see ${join(dir, 'kafka.log')}`);
            await sleep(200);
        }
    };
    const stop = async (signal) => {
        const child = broker;
        broker = undefined;
        if (!child || child.exitCode !== null || child.signalCode !== null)
            return;
        const gone = new Promise((r) => child.once('exit', () => r()));
        child.kill(signal);
        await gone;
    };
    await start();
    return {
        brokers,
        stop,
        start,
        async remove() {
            await stop('SIGKILL');
            rmSync(dir, { recursive: true, force: true });
        },
    };
}
//# sourceMappingURL=private-kafka.js.map