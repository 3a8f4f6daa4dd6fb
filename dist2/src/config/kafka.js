/** Kafka: brokers, consumer group, fetch size, topics, TLS and SASL. */
import { z } from 'zod';
import { brokerList, flag, kafkaName, positiveInt, readableFile, secret, service, setting } from './setting.js';
const topicName = z.string().regex(kafkaName, 'expected a Kafka topic name (letters, digits, . _ -)');
const SASL_MECHANISMS = ['plain', 'scram-sha-256', 'scram-sha-512'];
const vars = {
    AGENTLEDGER_KAFKA_BROKERS: setting(brokerList.default(['127.0.0.1:9092']), 'Kafka bootstrap brokers, comma-separated `host:port`.'),
    AGENTLEDGER_KAFKA_CLIENT_ID: setting(z.string().min(1).default('agentledger'), 'Client id the Kafka clients announce.'),
    AGENTLEDGER_KAFKA_GROUP_ID: setting(z.string().regex(kafkaName, 'expected a group id (letters, digits, . _ -)').default('agentledger-ingest'), 'Consumer group of `agentledger ingest`.'),
    AGENTLEDGER_KAFKA_SESSION_TIMEOUT_MS: setting(positiveInt(3_600_000).refine((n) => n >= 6000, 'expected a number >= 6000 (the broker minimum)').default(30_000), `How long the group waits for a silent consumer before giving its partitions
     to another, in ms; a killed process holds its partitions this long. From 6000
     (the broker minimum) to 3600000.`),
    AGENTLEDGER_KAFKA_FETCH_PARTITION_BYTES: setting(positiveInt(256 * 1024 * 1024).refine((n) => n >= 65_536, 'expected a number >= 65536').default(1024 * 1024), `Bytes \`ingest\` fetches per partition per Kafka request (a fetch takes eight
     times this from all partitions together). One fetch is decoded and judged as
     one batch, so this bounds the records in memory at once and drives peak
     memory with small records (bench/memory.ts, 300,000 craze events of ~300 B
     over 1,000 sessions: 4 MiB meant a peak RSS of 934-990 MB, 1 MiB 424 MB,
     512 KiB 375 MB; 600,000 1 KB envelopes: 387-415 MB at 4 MiB, 328 MB at
     1 MiB, no slower; docs/benchmarks.md "Speed", Memory). A record larger than this still
     arrives. Default 1 MiB; from 65536 to 268435456.`),
    AGENTLEDGER_ENVELOPE_TOPIC: setting(topicName.default('agent.envelopes'), 'Topic the loop runtime publishes Envelopes to.'),
    AGENTLEDGER_CRAZE_TOPIC: setting(topicName.default('craze.events'), 'Topic craze codec events are published to.'),
    AGENTLEDGER_DLQ_TOPIC: setting(topicName.default('agentledger.dlq'), 'Dead-letter topic for records that cannot be decoded.'),
    AGENTLEDGER_KAFKA_SSL: setting(flag.default(false), '`true`: connect to the brokers over TLS (docs/operations.md "TLS and SASL").'),
    AGENTLEDGER_KAFKA_SSL_CA_FILE: setting(readableFile.optional(), 'PEM file of the CA that signed the brokers\' certificates, when not a public one; needs `AGENTLEDGER_KAFKA_SSL=true`.', { unset: 'the system CAs' }),
    AGENTLEDGER_KAFKA_SSL_CERT_FILE: setting(readableFile.optional(), 'PEM client certificate for brokers that require one (mutual TLS); with `AGENTLEDGER_KAFKA_SSL_KEY_FILE` (both or neither) and `AGENTLEDGER_KAFKA_SSL=true`.'),
    AGENTLEDGER_KAFKA_SSL_KEY_FILE: setting(readableFile.optional(), 'PEM private key of `AGENTLEDGER_KAFKA_SSL_CERT_FILE` (both or neither).'),
    AGENTLEDGER_KAFKA_SASL_MECHANISM: setting(z.enum(SASL_MECHANISMS, { message: 'expected plain, scram-sha-256 or scram-sha-512' }).optional(), 'SASL mechanism: `plain`, `scram-sha-256` or `scram-sha-512`.', { unset: 'no SASL' }),
    AGENTLEDGER_KAFKA_SASL_USERNAME: setting(z.string().optional(), 'SASL user name; needed with `AGENTLEDGER_KAFKA_SASL_MECHANISM`, refused without one.'),
    AGENTLEDGER_KAFKA_SASL_PASSWORD: secret(z.string().optional(), 'SASL password; needed with `AGENTLEDGER_KAFKA_SASL_MECHANISM`, refused without one. Never printed.'),
};
export const kafka = service({
    title: 'Kafka',
    vars,
    config: (e) => {
        /** TLS to the brokers (undefined: plaintext); file paths, read when a client is made. */
        const ssl = e.AGENTLEDGER_KAFKA_SSL
            ? { caFile: e.AGENTLEDGER_KAFKA_SSL_CA_FILE, certFile: e.AGENTLEDGER_KAFKA_SSL_CERT_FILE, keyFile: e.AGENTLEDGER_KAFKA_SSL_KEY_FILE }
            : undefined;
        const sasl = e.AGENTLEDGER_KAFKA_SASL_MECHANISM
            ? { mechanism: e.AGENTLEDGER_KAFKA_SASL_MECHANISM, username: e.AGENTLEDGER_KAFKA_SASL_USERNAME ?? '', password: e.AGENTLEDGER_KAFKA_SASL_PASSWORD ?? '' }
            : undefined;
        return {
            kafka: {
                brokers: e.AGENTLEDGER_KAFKA_BROKERS,
                clientId: e.AGENTLEDGER_KAFKA_CLIENT_ID,
                groupId: e.AGENTLEDGER_KAFKA_GROUP_ID,
                sessionTimeoutMs: e.AGENTLEDGER_KAFKA_SESSION_TIMEOUT_MS,
                /** Bytes fetched per partition per request (AGENTLEDGER_KAFKA_FETCH_PARTITION_BYTES). */
                fetchPartitionBytes: e.AGENTLEDGER_KAFKA_FETCH_PARTITION_BYTES,
                topics: { envelopes: e.AGENTLEDGER_ENVELOPE_TOPIC, craze: e.AGENTLEDGER_CRAZE_TOPIC, deadLetter: e.AGENTLEDGER_DLQ_TOPIC },
                ssl,
                sasl,
            },
        };
    },
    problems: tlsSaslProblems,
    redacts: { 'kafka.sasl.password': ['AGENTLEDGER_KAFKA_SASL_PASSWORD'] },
});
/**
 * Settings that are each valid but do not go together (TLS files without TLS,
 * half a client certificate, SASL without its mechanism or credentials): one
 * line each, naming the setting to change. Kept out of the schema so
 * `envSchema.shape` stays a plain object of the variables.
 */
function tlsSaslProblems(e) {
    const problems = [];
    const needsSsl = ['AGENTLEDGER_KAFKA_SSL_CA_FILE', 'AGENTLEDGER_KAFKA_SSL_CERT_FILE', 'AGENTLEDGER_KAFKA_SSL_KEY_FILE'];
    for (const key of needsSsl) {
        if (e[key] !== undefined && !e.AGENTLEDGER_KAFKA_SSL)
            problems.push(`invalid setting ${key}: only used over TLS; set AGENTLEDGER_KAFKA_SSL=true or unset it`);
    }
    if ((e.AGENTLEDGER_KAFKA_SSL_CERT_FILE === undefined) !== (e.AGENTLEDGER_KAFKA_SSL_KEY_FILE === undefined)) {
        const missing = e.AGENTLEDGER_KAFKA_SSL_CERT_FILE === undefined ? 'AGENTLEDGER_KAFKA_SSL_CERT_FILE' : 'AGENTLEDGER_KAFKA_SSL_KEY_FILE';
        problems.push(`missing setting ${missing}: a client certificate needs both AGENTLEDGER_KAFKA_SSL_CERT_FILE and AGENTLEDGER_KAFKA_SSL_KEY_FILE`);
    }
    const credentials = ['AGENTLEDGER_KAFKA_SASL_USERNAME', 'AGENTLEDGER_KAFKA_SASL_PASSWORD'];
    if (e.AGENTLEDGER_KAFKA_SASL_MECHANISM !== undefined) {
        for (const key of credentials) {
            if (e[key] === undefined)
                problems.push(`missing setting ${key}: AGENTLEDGER_KAFKA_SASL_MECHANISM=${e.AGENTLEDGER_KAFKA_SASL_MECHANISM} needs it`);
        }
    }
    else {
        for (const key of credentials) {
            if (e[key] !== undefined)
                problems.push(`invalid setting ${key}: only used with SASL; set AGENTLEDGER_KAFKA_SASL_MECHANISM (plain, scram-sha-256 or scram-sha-512) or unset it`);
        }
    }
    return problems;
}
//# sourceMappingURL=kafka.js.map