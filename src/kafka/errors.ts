/**
 * What Kafka's failures mean, read once, here, from kafkajs's errors (their
 * `name`, `type` and `retriable`): the kind of a failure (transient, fatal),
 * a lost membership, what kafkajs's runner joins the group again on, and a
 * failed first contact in one line naming the setting to check. Nothing
 * outside src/kafka/ reads a kafkajs error's fields.
 */
import { AgentledgerError, causes, FatalError, failureMessage, OwnershipLost, socketCode, TransientError, type FailureKind } from '../errors/errors.js';

/** A failure to reach or use Kafka, in one line naming the setting to check. */
export class KafkaUnavailableError extends Error {
  override readonly name = 'KafkaUnavailableError';
}

/**
 * A login the broker refused: wrong credentials, a mechanism it does not
 * offer, or SASL sent to a listener without it (ILLEGAL_SASL_STATE).
 */
function isSaslRefusal(e: unknown): boolean {
  const { name, type } = e as { name?: unknown; type?: unknown };
  return name === 'KafkaJSSASLAuthenticationError' || (typeof type === 'string' && /^(ILLEGAL_SASL_STATE|UNSUPPORTED_SASL_MECHANISM|SASL_AUTHENTICATION_FAILED)$/.test(type));
}

/** The broker's answers for a client it knows and will not let do this: a right to grant, not a moment to wait. */
const AUTHORIZATION_TYPES = new Set([
  'TOPIC_AUTHORIZATION_FAILED',
  'GROUP_AUTHORIZATION_FAILED',
  'CLUSTER_AUTHORIZATION_FAILED',
  'TRANSACTIONAL_ID_AUTHORIZATION_FAILED',
  'DELEGATION_TOKEN_AUTHORIZATION_FAILED',
]);

/**
 * kafkajs errors it marks non-retriable only because it retried or waited
 * already (its retries ran out, no broker knew the group's coordinator, a
 * wait or a lock timed out): "not now", the next try may succeed.
 */
const GAVE_UP = new Set(['KafkaJSNumberOfRetriesExceeded', 'KafkaJSGroupCoordinatorNotFound', 'KafkaJSTimeout', 'KafkaJSLockTimeout']);

const isKafkaJS = (e: object): boolean => {
  const { name } = e as { name?: unknown };
  return typeof name === 'string' && name.startsWith('KafkaJS');
};

/**
 * The kind of a Kafka failure, after kafkajs's own `retriable` (undefined
 * when `err` is not kafkajs's). Fatal: a refused login or right anywhere
 * along the chain (SASL, *_AUTHORIZATION_FAILED), a protocol error the
 * broker says a retry cannot help (a message too large), and any other
 * error kafkajs marks non-retriable (a bad argument, an API the broker
 * lacks). Transient: what kafkajs calls retriable (connections, timeouts,
 * leaders moving), and what it gave up on after retrying a retriable one.
 */
export function kafkaFailure(err: unknown): FailureKind | undefined {
  const chain = [...causes(err)];
  for (const e of chain) {
    const { name, type, retriable } = e as { name?: unknown; type?: unknown; retriable?: unknown };
    if (isSaslRefusal(e) || (typeof type === 'string' && AUTHORIZATION_TYPES.has(type))) return 'fatal';
    if (name === 'KafkaJSProtocolError' && retriable === false) return 'fatal';
  }
  const outer = chain[0];
  if (outer === undefined || !isKafkaJS(outer)) return undefined;
  const { name, retriable } = outer as { name?: unknown; retriable?: unknown };
  if (retriable !== false) return 'transient';
  if (GAVE_UP.has(String(name)) || chain.slice(1).some((e) => (e as { retriable?: unknown }).retriable === true) || socketCode(err) !== undefined) return 'transient';
  return 'fatal';
}

/**
 * Whether the broker refused a record for its size (the topic's
 * max.message.bytes). Read from the error's `type`: KafkaJSProtocolError is
 * not a named export Node's ESM loader can see in kafkajs's CommonJS.
 */
export function recordTooLarge(err: unknown): boolean {
  return (err as { type?: unknown } | null)?.type === 'MESSAGE_TOO_LARGE';
}

/** What a failed first contact with the brokers means, and what to check. */
export function kafkaConnectFailure(brokers: string, err: unknown): KafkaUnavailableError {
  const message = failureMessage(err);
  if ([...causes(err)].some(isSaslRefusal)) {
    return new KafkaUnavailableError(
      `Kafka at ${brokers} refused the SASL login (${message}): check AGENTLEDGER_KAFKA_SASL_MECHANISM, AGENTLEDGER_KAFKA_SASL_USERNAME and AGENTLEDGER_KAFKA_SASL_PASSWORD, and that the brokers' listener takes SASL`,
      { cause: err },
    );
  }
  return new KafkaUnavailableError(
    `Kafka at ${brokers} did not answer (${message}): check that the brokers run and that AGENTLEDGER_KAFKA_BROKERS, and AGENTLEDGER_KAFKA_SSL / AGENTLEDGER_KAFKA_SASL_* if the brokers need them, are right`,
    { cause: err },
  );
}

/**
 * kafkajs's errors for a member the group no longer counts as the owner of
 * its partitions, a commit the client did not send (CommitNotSent
 * below: nothing proves the member still owns them), and a coordinator
 * that moved or has not answered for a session (CoordinatorLost below).
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
 * An offset commit kafkajs did not send: its runner was not running (stopping,
 * or restarting after a crash, while it waits for the batch in flight), and
 * then consumer.commitOffsets returns as if it had committed. Nothing proves
 * this member still owns the partitions, so it counts as a lost membership
 * (membershipError, by its `type`): the fence refuses the flush and the buffer
 * is dropped, to be read again by whoever owns the partitions next.
 */
export class CommitNotSent extends OwnershipLost {
  override name = 'CommitNotSent';
  readonly type = 'CONSUMER_NOT_RUNNING';
  constructor(partitions: number) {
    super(`offset commit of ${partitions} partition(s) not sent: the consumer is not running (stopping, or restarting after a crash); ownership is not proven`);
  }
}

/**
 * No heartbeat has reached the group's coordinator for longer than the
 * session timeout: the group has expelled this member by now, whatever it
 * holds. Typed as kafkajs's NOT_COORDINATOR_FOR_GROUP, which its runner
 * meets by joining again, and joining looks the coordinator up afresh.
 * Without that, kafkajs 2.2.4 keeps heartbeating and committing to the
 * coordinator it cached, which may be a broker that is gone
 * (tulios/kafkajs#1779): ingest would wait for that broker forever. A lost
 * membership (membershipError): the buffer is dropped, the owner after the
 * rejoin reads the records again.
 */
export class CoordinatorLost extends OwnershipLost {
  override name = 'CoordinatorLost';
  readonly type = 'NOT_COORDINATOR_FOR_GROUP';
  constructor(silentMs: number, cause: unknown, what = 'no heartbeat reached') {
    super(`${what} the group coordinator for ${silentMs} ms, longer than the session timeout: joining the group again to find its coordinator (${failureMessage(cause)})`, { cause });
  }
}

/** kafkajs's answer to a commit of a consumer that is not running (consumer/index.js: no consumer group until run()). */
const NOT_RUNNING = /^Consumer group was not initialized/;

/**
 * A failed Kafka request as the rest of the code sees it (src/errors/errors.ts):
 * OwnershipLost when the group no longer counts this member (its answer,
 * kafkajs's own error, kept as `cause`: kafkaGroup() throws that one to
 * kafkajs's runner, which joins again on it), else transient or fatal by
 * kafkaFailure (a socket error without kafkajs's: transient). Made once, by
 * the adapter (group.ts); an error typed already is left as it is.
 */
export function typedKafkaError(err: unknown): AgentledgerError {
  if (err instanceof AgentledgerError) return err;
  const message = err instanceof Error ? err.message : String(err);
  // A commit asked of a consumer between a stop and its next run (the
  // coordinator watch's rejoin, kafkajs's restart after a crash): nothing
  // proves the member owns its partitions, as CommitNotSent.
  if (NOT_RUNNING.test(message) && (err as { name?: unknown }).name === 'KafkaJSNonRetriableError') {
    return new OwnershipLost(message, { cause: err, code: 'CONSUMER_NOT_RUNNING' });
  }
  const lost = membershipError(err);
  const type = (lost as { type?: unknown } | undefined)?.type;
  if (lost !== undefined) return new OwnershipLost(message, { cause: err, ...(typeof type === 'string' ? { code: type } : {}) });
  const kind = kafkaFailure(err) ?? (socketCode(err) !== undefined ? 'transient' : 'fatal');
  const answer = [...causes(err)].map((e) => (e as { type?: unknown }).type).find((t): t is string => typeof t === 'string');
  const options = { cause: err, ...(answer === undefined ? {} : { code: answer }) };
  return kind === 'transient' ? new TransientError(message, options) : new FatalError(message, options);
}

/** `request`, its failure typed (typedKafkaError). */
export function typed<T>(request: Promise<T>): Promise<T> {
  return request.catch((err: unknown) => {
    throw typedKafkaError(err);
  });
}
