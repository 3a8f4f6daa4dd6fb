/**
 * What ingest does with a failure: retry it (transient), trace it to a
 * record (content), stop (fatal).
 */
import { statedKind, type FailureKind } from '../observability/errors.js';
import { clickhouseFailure } from '../clickhouse/errors.js';
import { kafkaFailure } from '../kafka/errors.js';

/**
 * Whether a failure is worth retrying (transient), was caused by the data
 * sent (content), or neither (fatal): what untilDone does with it. An
 * AgentledgerError says its kind (a TimeoutError of `within` is transient);
 * Kafka's errors follow kafkajs's `retriable`, except a refused login or
 * right, which no retry changes (kafkaFailure); ClickHouse's are classified
 * by code (clickhouseFailure).
 */
export function failureKind(err: unknown): FailureKind {
  return statedKind(err) ?? kafkaFailure(err) ?? clickhouseFailure(err);
}
