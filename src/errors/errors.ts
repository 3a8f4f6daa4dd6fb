/**
 * Errors typed by what a caller does with them (issue 22): try again later
 * (transient), set the data aside because the same data fails the same way
 * every time (content), stop and say why (fatal: a wrong setting, a missing
 * right, a bug; retrying forever would hide it), or drop what this member
 * holds (ownership lost: the group gave its partitions to another).
 *
 * The edges type every failure where it arises: the ClickHouse client
 * (src/clickhouse/client.ts, by the server's code) and the Kafka adapter
 * (src/kafka/group.ts, by kafkajs's error). Above them, a decision is an
 * `instanceof` (kindOf, ownershipLost), never a message or a code.
 *
 * Low in the import graph on purpose (it imports nothing of agentledger):
 * every folder, the sink included, may use it.
 */

export type FailureKind = 'transient' | 'content' | 'fatal';

/** What an edge knows of a failure besides its message: the error it explains, and the server's code. */
export interface FailureOptions {
  readonly cause?: unknown;
  /** The server's code (ClickHouse's number, Kafka's error type), for logs and people; decisions use the class. */
  readonly code?: string | number;
}

/** An error that says what a retry would do: its `kind`, the `cause` it explains, and the server's `code`. */
export class AgentledgerError extends Error {
  override name = 'AgentledgerError';
  readonly kind: FailureKind;
  readonly code: string | number | undefined;
  constructor(kind: FailureKind, message: string, options?: FailureOptions) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.kind = kind;
    this.code = options?.code;
  }
}

/**
 * The base of one kind's errors: the kinds differ in nothing but their kind
 * and name, and each stays a class of its own (for `instanceof`, and its
 * name in logs).
 */
function errorOfKind(kind: FailureKind, className: string) {
  return class extends AgentledgerError {
    override name = className;
    constructor(message: string, options?: FailureOptions) {
      super(kind, message, options);
    }
  };
}

/** Not now: the same request may succeed later. */
export class TransientError extends errorOfKind('transient', 'TransientError') {}

/** This data cannot be taken: the same data fails the same way every time. */
export class ContentError extends errorOfKind('content', 'ContentError') {}

/** Neither: a retry cannot change the answer. */
export class FatalError extends errorOfKind('fatal', 'FatalError') {}

/**
 * The consumer group no longer counts this member as the owner of its
 * partitions (expelled, an old generation, a coordinator silent for a
 * session, a commit the client did not send): whatever it holds is dropped,
 * and the next owner reads the records again. Transient for the member: it
 * joins again.
 */
export class OwnershipLost extends TransientError {
  override name = 'OwnershipLost';
}

/** A call that got no answer in time (`<what>: no answer from <from> in <ms> ms`): transient. */
export class TimeoutError extends TransientError {
  override name = 'TimeoutError';
  constructor(
    readonly what: string,
    readonly from: string,
    readonly ms: number,
  ) {
    super(`${what}: no answer from ${from} in ${ms} ms`);
  }
}

/**
 * `promise`, or a TimeoutError after `ms`: a request to a broker that went
 * away mid-call can stay pending for good, and one awaited while the buffer
 * lock is held would stall the consumer (seen when the broker restarts);
 * BullMQ waits as long for a Redis it never reached.
 */
export async function within<T>(promise: Promise<T>, ms: number, what: string, from = 'Kafka'): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new TimeoutError(what, from, ms)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `err` and the errors behind it, along `cause`, outermost first; at most
 * `max` of them (libraries wrap a few levels deep, never more; a cycle ends
 * the walk too). Only objects are yielded.
 */
export function* causes(err: unknown, max = 5): Generator<object, void, undefined> {
  const seen = new Set<object>();
  for (let e = err; typeof e === 'object' && e !== null && seen.size < max && !seen.has(e); e = (e as { cause?: unknown }).cause) {
    seen.add(e);
    yield e;
  }
}

/**
 * Node's (and undici's) socket errors: the server, or the path to it, is
 * away. The one list for every service (ClickHouse, Kafka, a webhook).
 */
export const SOCKET_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED', // nothing listens at the address (a server down or restarting)
  'ECONNRESET', // the peer cut an open connection (a restart, a proxy's idle timeout)
  'ECONNABORTED', // the connection was aborted on this side mid-request
  'EPIPE', // written to a connection the peer had closed
  'ETIMEDOUT', // the connect or a read timed out at the socket level
  'EHOSTUNREACH', // no route to the host (it is down, or the network is partitioned)
  'ENETUNREACH', // no route to the network
  'ENETDOWN', // the local network interface is down
  'EAI_AGAIN', // DNS answered "try again" (a resolver away for a moment)
  'ENOTFOUND', // DNS found no such name (a container not started yet, or a typo that a later check reports)
  'UND_ERR_SOCKET', // undici (fetch): the socket closed under the request
]);

/** Node's answer to a listen on an address another process holds. */
export const addressInUse = (err: unknown): boolean => (err as { code?: unknown } | null)?.code === 'EADDRINUSE';

/** Node's answer to a write to a pipe whose reader is gone (`agentledger verify x | head`). */
export const brokenPipe = (err: unknown): boolean => (err as { code?: unknown } | null)?.code === 'EPIPE';

/** The socket error code somewhere along the cause chain of `err`, if any. */
export function socketCode(err: unknown): string | undefined {
  for (const e of causes(err)) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && SOCKET_CODES.has(code)) return code;
  }
  return undefined;
}

/** The kind the first AgentledgerError along the cause chain of `err` states, if any. */
export function statedKind(err: unknown): FailureKind | undefined {
  for (const e of causes(err)) if (e instanceof AgentledgerError) return e.kind;
  return undefined;
}

/**
 * What a caller does with `err`: the kind its edge typed it with. An error
 * no edge typed is a bug of ours (or an edge that forgot one): fatal, said
 * and restarted rather than retried in silence.
 */
export function kindOf(err: unknown): FailureKind {
  return statedKind(err) ?? 'fatal';
}

/** The OwnershipLost along the cause chain of `err`, if the failure is one. */
export function ownershipLost(err: unknown): OwnershipLost | undefined {
  for (const e of causes(err)) if (e instanceof OwnershipLost) return e;
  return undefined;
}

/**
 * A failure's message on one line, bounded (ClickHouse quotes the data it
 * could not parse) and well-formed (it becomes a row's detail: a lone
 * surrogate there would make that row fail too). A thrown non-Error is its
 * String().
 */
export function failureMessage(err: unknown, max = 2000): string {
  let text = (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').trim();
  if (text.length > max) text = `${text.slice(0, max)}…`;
  return text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
}

/** `err` as an Error (a thrown non-Error becomes one with its String()). */
export function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
