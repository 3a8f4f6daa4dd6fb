import { env, INGEST_LOOPS, INGEST_PER_LOOP, LATE_MS, say, SWEEP_MS, TS } from './options.js';
import { cli, rows, settleMerges, waitMutations } from './helpers.js';
export async function ingestComparison(ch, topics, groups) {
    const topic = `bench.rollups.${TS}`;
    topics.push(topic, `${topic}.craze`, `${topic}.dlq`);
    const topicEnv = { AGENTLEDGER_ENVELOPE_TOPIC: topic, AGENTLEDGER_CRAZE_TOPIC: `${topic}.craze`, AGENTLEDGER_DLQ_TOPIC: `${topic}.dlq` };
    say(`producing ${INGEST_LOOPS} loops x ${INGEST_PER_LOOP} envelopes (~1 KB) to ${topic} (not timed)`);
    const produced = await cli(['produce-demo', '--loops', String(INGEST_LOOPS), '--envelopes', String(INGEST_PER_LOOP), '--seed', '7', '--payload-bytes', '1024', '--json'], env(topicEnv)).done;
    if (produced.code !== 0)
        throw new Error(`produce-demo failed: ${produced.err.slice(-2000)}`);
    const summary = JSON.parse(produced.out);
    const records = summary.envelopes;
    // The rows an ingest run adds are dropped before the next one: they land in
    // the partition of this month (ingested_at), which the loaded rows never reach.
    const [month] = await rows(ch, `SELECT toString(toYYYYMM(now())) AS p, (SELECT count() FROM envelopes WHERE toYYYYMM(ingested_at) = toYYYYMM(now())) AS loaded`);
    if (month === undefined || Number(month.loaded) !== 0)
        throw new Error('loaded rows share the partition of this month: the ingest runs could not be told apart');
    const reset = async () => {
        await ch.command({ query: `ALTER TABLE envelopes DROP PARTITION ${month.p}` });
        await ch.command({ query: `ALTER TABLE loop_heads DELETE WHERE kafka_topic = '${topic}'` });
        await waitMutations(ch);
        await settleMerges(ch, 60);
    };
    const sweepsDone = async () => Number((await rows(ch, 'SELECT count() AS n FROM rollup_sweeps'))[0]?.n ?? 0);
    const runs = [];
    const order = ['alone', 'with worker', 'with worker', 'alone'];
    for (const [i, label] of order.entries()) {
        const group = `bench.rollups.${TS}.ingest${i}`;
        groups.push(group);
        let worker;
        const sweeps0 = await sweepsDone();
        if (label === 'with worker') {
            worker = cli(['worker'], env({ AGENTLEDGER_ROLLUP_SWEEP_MS: String(SWEEP_MS), AGENTLEDGER_ROLLUP_LATE_MS: String(LATE_MS) }));
            // Its first sweep done: the worker is up and sweeping when the ingest starts.
            const deadline = Date.now() + 60_000;
            while ((await sweepsDone()) === sweeps0) {
                if (Date.now() > deadline)
                    throw new Error('the worker did not finish a sweep within 60 s');
                if (worker.child.exitCode !== null)
                    throw new Error(`the worker exited: ${(await worker.done).err.slice(-2000)}`);
                await new Promise((r) => setTimeout(r, 250));
            }
        }
        const sweeps1 = await sweepsDone();
        const [before] = await rows(ch, 'SELECT count() AS n FROM envelopes');
        const t = performance.now();
        const result = await cli(['ingest', '--no-migrate', '--idle-exit-ms', '3000'], env({ ...topicEnv, AGENTLEDGER_KAFKA_GROUP_ID: group })).done;
        // The idle wait (3 s) is not ingest time.
        const seconds = (performance.now() - t) / 1000 - 3;
        const sweeps = (await sweepsDone()) - sweeps1;
        if (worker !== undefined) {
            worker.child.kill('SIGTERM');
            const stop = setTimeout(() => worker?.child.kill('SIGKILL'), 60_000);
            await worker.done;
            clearTimeout(stop);
        }
        if (result.code !== 0)
            throw new Error(`ingest failed: ${result.err.slice(-2000)}`);
        const [after] = await rows(ch, 'SELECT count() AS n FROM envelopes');
        const stored = Number(after?.n) - Number(before?.n);
        if (stored !== records)
            throw new Error(`ingest run ${i + 1} stored ${stored} of ${records} envelopes`);
        runs.push({ label, seconds, rate: records / seconds, sweeps });
        say(`ingest run ${i + 1}/4 (${label}): ${records.toLocaleString()} envelopes in ${seconds.toFixed(1)} s, ${Math.round(records / seconds).toLocaleString()} envelopes/s${worker ? `, ${sweeps} sweep(s) meanwhile` : ''}`);
        await reset();
    }
    return runs;
}
//# sourceMappingURL=ingest.js.map