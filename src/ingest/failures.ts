/**
 * What ingest does with a failure: retry it (transient), trace it to a
 * record (content), stop (fatal); and whether it means this member lost its
 * partitions.
 */
import { causes, statedKind, type FailureKind } from '../observability/errors.js';
import { clickhouseFailure } from '../sink/clickhouse/errors.js';
import { kafkaFailure } from '../sources/kafka.js';

/**
 * kafkajs's errors for a member the group no longer counts as the owner of
 * its partitions, a commit the client did not send (CommitNotSent in
 * group.ts: nothing proves the member still owns them), and a coordinator
 * that moved or has not answered for a session (CoordinatorLost in
 * retry.ts).
 */
const MEMBERSHIP_ERRORS = new Set(['UNKNOWN_MEMBER_ID', 'ILLEGAL_GENERATION', 'REBALANCE_IN_PROGRESS', 'FENCED_INSTANCE_ID', 'CONSUMER_NOT_RUNNING', 'NOT_COORDINATOR_FOR_GROUP']);

/**
 * The types of an error thrown out of eachBatch on which kafkajs's runner
 * joins the group again by itself (runner.js: isRebalancing and
 * UNKNOWN_MEMBER_ID, read on the error itself, not its causes).
 */
const KAFKAJS_REJOINS_ON = new Set(['REBALANCE_IN_PROGRESS', 'NOT_COORDINATOR_FOR_GROUP', 'ILLEGAL_GENERATION', 'UNKNOWN_MEMBER_ID']);

/** Whether kafkajs joins the group again when eachBatch throws `err` (CoordinatorLost does, by its type). */
export function kafkajsRejoinsOn(err: unknown): boolean {
  return KAFKAJS_REJOINS_ON.has(String((err as { type?: unknown } | undefined)?.type));
}

/**
 * The group-membership error behind `err`, if that is what it is: kafkajs's
 * retrier wraps the coordinator's answer (KafkaJSNonRetriableError, the
 * answer as `cause`), and its runner recognises only the bare one.
 */
export function membershipError(err: unknown): Error | undefined {
  for (const e of causes(err)) {
    if (MEMBERSHIP_ERRORS.has(String((e as { type?: unknown }).type))) return e as Error;
  }
  return undefined;
}

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
