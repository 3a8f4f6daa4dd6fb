import { defaultViolationPlan, generateSpendTraffic, generateTraffic, malformedRecords, type Traffic } from '../demo/traffic/index.js';
import type { OutgoingRecord } from '../kafka/checked-send.js';
import { createKafka, createProducer, ensureTopics } from '../kafka/client.js';
import { recordTooLarge } from '../kafka/errors.js';
import type { Command } from './command.js';
import { compressionOption, parseOptions, UsageError } from './command.js';

const CHUNK = 2000;

function wholeNumber(option: string, text: string | undefined, fallback: number, min: number): number {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text)) || Number(text) < min) {
    throw new UsageError(`--${option} expects a whole number >= ${min}, got ${JSON.stringify(text)}`);
  }
  return Number(text);
}

function envelopeRange(text: string | undefined): number | [number, number] {
  if (text === undefined) return 25;
  const m = /^(\d+)(?:-(\d+))?$/.exec(text);
  const min = Number(m?.[1]);
  const max = m?.[2] === undefined ? min : Number(m[2]);
  if (!m || !Number.isSafeInteger(min) || !Number.isSafeInteger(max) || min < 1 || max < min) {
    throw new UsageError(`--envelopes expects M or MIN-MAX (whole numbers >= 1), got ${JSON.stringify(text)}`);
  }
  return min === max ? min : [min, max];
}

/**
 * --start-time as RFC 3339 UTC text: given as such (checked by the
 * generator), or `now` / `now-N<s|m|h|d>` relative to `now`, whole seconds.
 */
export function startTimeOf(text: string, now: Date, option = 'start-time'): string {
  const relative = /^now(?:-(\d{1,9})([smhd]))?$/.exec(text);
  if (relative === null) {
    if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z$/.test(text)) {
      throw new UsageError(`--${option} expects an RFC 3339 UTC time (2026-11-30T10:00:00Z), now or now-N[smhd], got ${JSON.stringify(text)}`);
    }
    return text;
  }
  const unitMs = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
  const backMs = relative[1] === undefined ? 0 : Number(relative[1]) * unitMs[relative[2] as keyof typeof unitMs];
  return new Date(Math.floor((now.getTime() - backMs) / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

export const produceDemoCommand: Command = {
  name: 'produce-demo',
  summary: 'produce generated loop-runtime traffic (with known verdicts) to the envelope topic',
  help: `Usage: agentledger produce-demo [--loops N] [--envelopes M|MIN-MAX] [--seed S]
                                 [--payload-bytes B] [--violations] [--malformed]
                                 [--spend-roots R] [--start-time T] [--compression C]
                                 [--json]

Generates deterministic loop-runtime traffic (hash-chained Envelopes, encoded
as Go's encoding/json writes them) and produces it to AGENTLEDGER_ENVELOPE_TOPIC,
key = LoopID, interleaved across loops as a runtime fleet would write it
(per-loop order kept). Creates the topic if missing (4 partitions,
max.message.bytes=16777216). Producer acks: all in-sync replicas.

Options:
  --loops N           number of loops (default 200)
  --envelopes M       envelopes per loop, or MIN-MAX drawn per loop (default 25)
  --seed S            PRNG seed: the same options produce the same bytes (default 1)
  --payload-bytes B   average record size to aim for, padding model responses
                      and tool results (default 1024)
  --violations        plant problems in about 1.5% of the loops each (at least
                      one each; needs loops of >= 3 envelopes): a changed
                      payload byte (mismatch), a deleted envelope (gap), a
                      second version of a seq (fork), an earlier Time (time
                      regression), two envelopes swapped (gap + regression),
                      and an exact redelivery (duplicate: not a violation)
  --malformed         also send every kind of record that cannot be decoded
                      (not JSON, wrong types, bad base64, bad hashes, bad Seq,
                      bad Time, a >10 MB payload, invalid UTF-8, an empty
                      value, payloads of the wrong type), half-way through,
                      each as its own request
  --spend-roots R     also send R loop trees made for the spend ledger (issue 10):
                      roots with sub-agents and grandchildren, forks whose
                      replays come before their ForkedFrom, redeliveries, a
                      tampered ModelCalled, a second version, several providers
                      and models with Go's USD texts, and a model past 2^64
                      picodollars; their exact expected totals are in --json
                      (default 0)
  --start-time T      when the first loop starts: an RFC 3339 UTC time
                      (2026-11-30T10:00:00Z), now, or now-N followed by s, m,
                      h or d (now-20m). Default: 2026-11-30T10:00:00Z for the
                      loops and 2026-11-30T23:57:00Z for the spend trees, so
                      the bytes stay the same from day to day; give a recent
                      time when alerts should see the traffic (the alert rules
                      ignore loops idle for longer than
                      AGENTLEDGER_ALERT_MAX_AGE_MS, a day by default)
  --compression C     compress the record batches with none (default), gzip,
                      snappy, lz4 or zstd, as Kafka defines them (snappy in
                      the Java client's framing); ingest reads all five
  --json              print the summary as one JSON object

Output: one summary line, or with --json
{"topic", "loops", "envelopes", "records", "duplicates", "violations": [{"loopId", "seq", "verdict"}], "malformed", "seconds",
 "spend": {"loops", "envelopes", "modelCalls", "modelCostPicoUsd", "budgetPicoUsd"} (with --spend-roots)}
where envelopes counts the distinct (loop, seq) a consumer must store once each,
records the Kafka records sent for them (forks' second versions and
redeliveries included, malformed records not), and violations the verdicts a
verifier must report. Progress goes to stderr every 10% of a run of 20,000
records or more.`,
  async run(args, { config, log, out }) {
    const { values } = parseOptions(args, {
      loops: { type: 'string' },
      envelopes: { type: 'string' },
      seed: { type: 'string' },
      'payload-bytes': { type: 'string' },
      violations: { type: 'boolean' },
      malformed: { type: 'boolean' },
      'spend-roots': { type: 'string' },
      'start-time': { type: 'string' },
      compression: { type: 'string' },
      json: { type: 'boolean' },
    });
    const compression = compressionOption(values.compression);
    const loops = wholeNumber('loops', values.loops, 200, 1);
    const seed = wholeNumber('seed', values.seed, 1, 0);
    if (seed > 0xffffffff) throw new UsageError(`--seed expects a whole number below 2^32, got ${seed}`);
    const payloadBytes = wholeNumber('payload-bytes', values['payload-bytes'], 1024, 0);
    const spendRoots = wholeNumber('spend-roots', values['spend-roots'], 0, 0);
    const startTime = values['start-time'] === undefined ? undefined : startTimeOf(values['start-time'], new Date());
    let spend: ReturnType<typeof generateSpendTraffic> | undefined;
    let traffic: Traffic;
    try {
      spend = spendRoots > 0 ? generateSpendTraffic({ seed, roots: spendRoots, startTime }) : undefined;
      traffic = generateTraffic({
        startTime,
        loops,
        envelopesPerLoop: envelopeRange(values.envelopes),
        seed,
        payloadBytes,
        violations: values.violations ? defaultViolationPlan(loops) : undefined,
      });
    } catch (err) {
      if (err instanceof RangeError) throw new UsageError(err.message);
      throw err;
    }
    const { expected } = traffic;
    const topic = config.kafka.topics.envelopes;
    const kafka = createKafka(config.kafka, log);
    await ensureTopics(kafka, [{ topic, numPartitions: 4, configEntries: [{ name: 'max.message.bytes', value: '16777216' }] }]);
    const producer = createProducer(kafka, { allowAutoTopicCreation: false });
    await producer.connect();

    const started = process.hrtime.bigint();
    const elapsed = (): number => Number(process.hrtime.bigint() - started) / 1e9;
    const total = expected.records + (spend?.records.length ?? 0);
    const half = Math.floor(total / 2);
    const showProgress = total >= 20_000;
    let nextProgress = Math.ceil(total / 10);
    let sent = 0;
    let bytes = 0;
    let malformedSent = 0;

    const sendMalformed = async (): Promise<void> => {
      for (const bad of malformedRecords()) {
        try {
          await producer.send({ topic, compression, messages: [{ key: bad.key, value: bad.value }] });
          malformedSent++;
        } catch (err) {
          // A topic made elsewhere may refuse the >10 MB record: say so, keep going.
          if (recordTooLarge(err)) {
            log.warn('malformed record refused by the broker as too large (topic max.message.bytes)', { record: bad.name, bytes: bad.value.length });
            continue;
          }
          throw err;
        }
      }
    };
    // One request in flight while the next chunk is generated; the next starts
    // only when the previous one is acknowledged, so per-loop order holds
    // through retries.
    let pending: Promise<void> = Promise.resolve();
    const flush = async (chunk: OutgoingRecord[]): Promise<void> => {
      await pending; // the previous request's failure surfaces here
      if (chunk.length === 0) return;
      const request = producer.send({ topic, compression, messages: chunk }).then(() => {
        sent += chunk.length;
        if (showProgress && sent >= nextProgress) {
          process.stderr.write(
            `produce-demo: ${Math.floor((sent * 100) / total)}% (${sent}/${total} records, ${Math.round(sent / elapsed())} records/s)\n`,
          );
          while (nextProgress <= sent) nextProgress += Math.ceil(total / 10);
        }
      });
      request.catch(() => undefined); // awaited by the next flush
      pending = request;
    };
    const letIoRun = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

    try {
      let chunk: OutgoingRecord[] = [];
      let queued = 0;
      let malformedDone = !values.malformed;
      for (const r of traffic.records) {
        chunk.push({ key: r.key, value: r.value });
        bytes += r.value.length;
        if (chunk.length % 256 === 0) await letIoRun();
        if (chunk.length >= CHUNK || (!malformedDone && queued + chunk.length === half)) {
          queued += chunk.length;
          await flush(chunk);
          chunk = [];
        }
        if (!malformedDone && queued >= half) {
          await flush([]);
          await sendMalformed();
          malformedDone = true;
        }
      }
      // The spend trees after the rest (their own loops: the order across loops does not matter).
      for (const r of spend?.records ?? []) {
        chunk.push({ key: r.key, value: r.value });
        bytes += r.value.length;
        if (chunk.length >= CHUNK) {
          await flush(chunk);
          chunk = [];
        }
      }
      await flush(chunk);
      await flush([]);
      if (!malformedDone) await sendMalformed();
    } finally {
      await producer.disconnect();
    }

    const seconds = elapsed();
    if (values.json) {
      out(
        JSON.stringify({
          topic,
          loops,
          envelopes: expected.envelopes,
          records: sent,
          duplicates: expected.duplicates,
          violations: expected.violations,
          malformed: malformedSent,
          seconds: Math.round(seconds * 1000) / 1000,
          ...(spend
            ? {
                spend: {
                  loops: spend.expected.loops.length,
                  envelopes: spend.expected.envelopes,
                  modelCalls: spend.expected.totals.modelCalls,
                  modelCostPicoUsd: spend.expected.totals.modelCostPicoUsd,
                  budgetPicoUsd: spend.expected.totals.budgetPicoUsd,
                },
              }
            : {}),
        }),
      );
    } else {
      out(
        `produced ${sent} records (${expected.envelopes} envelopes of ${loops} loops, ${expected.duplicates} duplicate(s), ` +
          `${expected.violations.length} planted violation(s), ${malformedSent} malformed) to ${topic} in ${seconds.toFixed(2)} s: ` +
          `${Math.round(sent / seconds)} records/s, ${(bytes / 1e6).toFixed(1)} MB`,
      );
      if (spend) {
        out(
          `  with ${spend.expected.loops.length} spend loops (${spend.expected.envelopes} envelopes): ${spend.expected.totals.modelCalls} counted model calls, ` +
            `${spend.expected.totals.modelCostPicoUsd} picodollars of model cost expected`,
        );
      }
    }
    return 0;
  },
};
