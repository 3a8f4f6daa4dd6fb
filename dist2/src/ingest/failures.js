/**
 * What ingest does with a failure: retry it (transient), trace it to a
 * record (content), stop (fatal); and whether it means this member lost its
 * partitions.
 */
import { causes, statedKind } from '../observability/errors.js';
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
 * The group-membership error behind `err`, if that is what it is: kafkajs's
 * retrier wraps the coordinator's answer (KafkaJSNonRetriableError, the
 * answer as `cause`), and its runner recognises only the bare one.
 */
export function membershipError(err) {
    for (const e of causes(err)) {
        if (MEMBERSHIP_ERRORS.has(String(e.type)))
            return e;
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
export function failureKind(err) {
    return statedKind(err) ?? kafkaFailure(err) ?? clickhouseFailure(err);
}
//# sourceMappingURL=failures.js.map