/**
 * The bare-consumer baseline of bench/e2e.sh, and its Kafka clean-up.
 *
 *   node dist/bench/e2e-bare.js consume --topic T --group G --expect N [--brokers H:P]
 *     A kafkajs consumer (a new group, from the beginning) whose eachBatch only
 *     counts messages, with the same fetch sizes as `agentledger ingest`; stops
 *     when it has seen N messages. Prints one JSON object:
 *     {"messages", "bytes", "complete", "secondsFromStart", "secondsFromFirstMessage",
 *      "envelopesPerSecond", "cpuSeconds"}
 *     where secondsFromStart runs from process start (what e2e.sh times for
 *     agentledger too) to the last message, and cpuSeconds is this process's
 *     user + system CPU until then.
 *
 *   node dist/bench/e2e-bare.js reset-group --topic T --group G [--brokers H:P]
 *     Commits offset 0 for group G on every partition of T. ClickHouse's Kafka
 *     engine starts a group that has no committed offset at the LATEST offset
 *     (it would read nothing of a topic produced before it); with this it
 *     reads the topic from the beginning. The group must have no members yet.
 *
 *   node dist/bench/e2e-bare.js cleanup --topics T1,T2 --groups G1,G2 [--brokers H:P]
 *     Deletes the consumer groups, then the topics; missing ones are not an
 *     error, and a group that cannot be deleted (members left) is reported
 *     and skipped.
 */
import { Kafka, logLevel } from 'kafkajs';
import { parseArgs } from 'node:util';
const { values: args, positionals } = parseArgs({
    allowPositionals: true,
    options: {
        brokers: { type: 'string', default: '127.0.0.1:9092' },
        topic: { type: 'string' },
        group: { type: 'string' },
        expect: { type: 'string' },
        'timeout-ms': { type: 'string', default: '600000' },
        topics: { type: 'string', default: '' },
        groups: { type: 'string', default: '' },
    },
});
const kafka = new Kafka({
    clientId: 'agentledger-bench-bare',
    brokers: (args.brokers ?? '127.0.0.1:9092').split(','),
    logLevel: logLevel.ERROR,
    retry: { initialRetryTime: 300, retries: 8 },
});
function fail(message) {
    process.stderr.write(`e2e-bare: ${message}\n`);
    process.exit(2);
}
async function consume() {
    const topic = args.topic ?? fail('--topic is required');
    const groupId = args.group ?? fail('--group is required');
    const expected = Number(args.expect);
    if (!Number.isSafeInteger(expected) || expected < 1)
        fail('--expect takes a whole number >= 1');
    const timeoutMs = Number(args['timeout-ms']);
    // The same fetch settings as agentledger's Ingestor, so the baseline reads the same way.
    const consumer = kafka.consumer({ groupId, sessionTimeout: 30_000, heartbeatInterval: 3_000, maxBytesPerPartition: 4 * 1024 * 1024, maxBytes: 32 * 1024 * 1024 });
    let messages = 0;
    let bytes = 0;
    let firstAt;
    let doneAt;
    let cpuAtDone;
    let resolveDone = () => undefined;
    const done = new Promise((r) => (resolveDone = r));
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
        eachBatch: ({ batch }) => {
            firstAt ??= performance.now();
            messages += batch.messages.length;
            for (const m of batch.messages)
                bytes += m.value?.length ?? 0;
            if (messages >= expected && doneAt === undefined) {
                doneAt = performance.now();
                cpuAtDone = process.cpuUsage();
                resolveDone();
            }
            return Promise.resolve();
        },
    });
    const timer = setTimeout(resolveDone, timeoutMs);
    await done;
    clearTimeout(timer);
    await consumer.disconnect();
    // performance.now() counts from the process's time origin (its start).
    const end = doneAt ?? performance.now();
    const cpu = cpuAtDone ?? process.cpuUsage();
    const report = {
        messages,
        bytes,
        complete: messages >= expected,
        secondsFromStart: end / 1000,
        secondsFromFirstMessage: firstAt === undefined ? null : (end - firstAt) / 1000,
        envelopesPerSecond: Math.round(messages / (end / 1000)),
        cpuSeconds: (cpu.user + cpu.system) / 1e6,
    };
    process.stdout.write(JSON.stringify(report) + '\n');
    process.exitCode = report.complete ? 0 : 1;
}
async function cleanup() {
    const topics = (args.topics ?? '').split(',').filter((t) => t.length > 0);
    const groups = (args.groups ?? '').split(',').filter((g) => g.length > 0);
    const admin = kafka.admin();
    await admin.connect();
    try {
        const existingGroups = new Set((await admin.listGroups()).groups.map((g) => g.groupId));
        const deleteGroups = [];
        // One at a time: deleteGroups fails as a whole when one group still has
        // members (a Kafka engine consumer that has not left yet), and the others
        // should go all the same.
        for (const g of groups.filter((g) => existingGroups.has(g))) {
            try {
                await admin.deleteGroups([g]);
                deleteGroups.push(g);
            }
            catch (err) {
                process.stderr.write(`e2e-bare: could not delete group ${g}: ${err instanceof Error ? err.message : String(err)}\n`);
            }
        }
        const existingTopics = new Set(await admin.listTopics());
        const deleteTopics = topics.filter((t) => existingTopics.has(t));
        if (deleteTopics.length > 0)
            await admin.deleteTopics({ topics: deleteTopics, timeout: 30_000 });
        process.stdout.write(`deleted groups [${deleteGroups.join(', ')}], topics [${deleteTopics.join(', ')}]\n`);
    }
    finally {
        await admin.disconnect();
    }
}
async function resetGroup() {
    const topic = args.topic ?? fail('--topic is required');
    const groupId = args.group ?? fail('--group is required');
    const admin = kafka.admin();
    await admin.connect();
    try {
        const [meta] = (await admin.fetchTopicMetadata({ topics: [topic] })).topics;
        if (!meta || meta.partitions.length === 0)
            fail(`topic ${topic} has no partitions`);
        const partitions = meta.partitions.map((p) => ({ partition: p.partitionId, offset: '0' }));
        await admin.setOffsets({ groupId, topic, partitions });
        // Read back: the engine must find these offsets when it joins.
        const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
        const offsets = (committed?.partitions ?? []).map((p) => `${p.partition}:${p.offset}`).sort();
        if (offsets.length !== partitions.length || offsets.some((o) => !o.endsWith(':0')))
            fail(`group ${groupId} has offsets ${offsets.join(', ')} after the reset`);
        process.stdout.write(`group ${groupId}: offset 0 on ${partitions.length} partitions of ${topic}\n`);
    }
    finally {
        await admin.disconnect();
    }
}
const command = positionals[0];
if (command === 'consume')
    await consume();
else if (command === 'reset-group')
    await resetGroup();
else if (command === 'cleanup')
    await cleanup();
else
    fail('usage: e2e-bare.js consume --topic T --group G --expect N | reset-group --topic T --group G | cleanup --topics T,.. --groups G,..');
//# sourceMappingURL=e2e-bare.js.map