/**
 * Errors typed by what a caller does with them (issue 22): try again later
 * (transient), set the data aside because the same data fails the same way
 * every time (content), or stop and say why (fatal: a wrong setting, a
 * missing right, a bug; retrying forever would hide it).
 *
 * Low in the import graph on purpose (it imports nothing of agentledger):
 * every folder, the sink included, may use it.
 */
/** An error that says what a retry would do: its `kind`, and the `cause` it explains. */
export class AgentledgerError extends Error {
    name = 'AgentledgerError';
    kind;
    constructor(kind, message, options) {
        super(message, options);
        this.kind = kind;
    }
}
/**
 * The base of one kind's errors: the kinds differ in nothing but their kind
 * and name, and each stays a class of its own (for `instanceof`, and its
 * name in logs).
 */
function errorOfKind(kind, className) {
    return class extends AgentledgerError {
        name = className;
        constructor(message, options) {
            super(kind, message, options);
        }
    };
}
/** Not now: the same request may succeed later. */
export class TransientError extends errorOfKind('transient', 'TransientError') {
}
/** This data cannot be taken: the same data fails the same way every time. */
export class ContentError extends errorOfKind('content', 'ContentError') {
}
/** Neither: a retry cannot change the answer. */
export class FatalError extends errorOfKind('fatal', 'FatalError') {
}
/** A call that got no answer in time (`<what>: no answer from <from> in <ms> ms`): transient. */
export class TimeoutError extends TransientError {
    what;
    from;
    ms;
    name = 'TimeoutError';
    constructor(what, from, ms) {
        super(`${what}: no answer from ${from} in ${ms} ms`);
        this.what = what;
        this.from = from;
        this.ms = ms;
    }
}
/**
 * `promise`, or a TimeoutError after `ms`: a request to a broker that went
 * away mid-call can stay pending for good, and one awaited while the buffer
 * lock is held would stall the consumer (seen when the broker restarts);
 * BullMQ waits as long for a Redis it never reached.
 */
export async function within(promise, ms, what, from = 'Kafka') {
    let timer;
    try {
        return await Promise.race([
            promise,
            new Promise((_, reject) => {
                timer = setTimeout(() => reject(new TimeoutError(what, from, ms)), ms);
            }),
        ]);
    }
    finally {
        clearTimeout(timer);
    }
}
/**
 * `err` and the errors behind it, along `cause`, outermost first; at most
 * `max` of them (libraries wrap a few levels deep, never more; a cycle ends
 * the walk too). Only objects are yielded.
 */
export function* causes(err, max = 5) {
    const seen = new Set();
    for (let e = err; typeof e === 'object' && e !== null && seen.size < max && !seen.has(e); e = e.cause) {
        seen.add(e);
        yield e;
    }
}
/**
 * Node's (and undici's) socket errors: the server, or the path to it, is
 * away. The one list for every service (ClickHouse, Kafka, a webhook).
 */
export const SOCKET_CODES = new Set([
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
/** The socket error code somewhere along the cause chain of `err`, if any. */
export function socketCode(err) {
    for (const e of causes(err)) {
        const code = e.code;
        if (typeof code === 'string' && SOCKET_CODES.has(code))
            return code;
    }
    return undefined;
}
/** The kind the first AgentledgerError along the cause chain of `err` states, if any. */
export function statedKind(err) {
    for (const e of causes(err))
        if (e instanceof AgentledgerError)
            return e.kind;
    return undefined;
}
/**
 * A failure's message on one line, bounded (ClickHouse quotes the data it
 * could not parse) and well-formed (it becomes a row's detail: a lone
 * surrogate there would make that row fail too). A thrown non-Error is its
 * String().
 */
export function failureMessage(err, max = 2000) {
    let text = (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').trim();
    if (text.length > max)
        text = `${text.slice(0, max)}…`;
    return text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
}
/** `err` as an Error (a thrown non-Error becomes one with its String()). */
export function asError(err) {
    return err instanceof Error ? err : new Error(String(err));
}
//# sourceMappingURL=errors.js.map