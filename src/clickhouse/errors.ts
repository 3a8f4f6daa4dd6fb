/**
 * What a failed ClickHouse request means for the one who made it: try again
 * later (transient), the data sent was refused (content: the same rows fail
 * the same way every time, so only setting them aside helps), or anything
 * else (fatal: a wrong setting, a missing right, a bug; retrying forever
 * would hide it). Unknown is fatal on purpose: a supervisor restarting a
 * process that says why is better than a consumer paused in silence.
 */
import { AgentledgerError, causes, ContentError, FatalError, SOCKET_CODES, statedKind, TransientError, type FailureKind } from '../errors/errors.js';

/**
 * Server answers that say "not now": overload, timeouts, a cut connection, a
 * replica or keeper away, an insert whose status is unknown. (Both error
 * formats carry the code: see clickhouseErrorCode.)
 */
const TRANSIENT_CODES = new Set([
  3, // UNEXPECTED_END_OF_FILE (a connection cut mid-request)
  32, // ATTEMPT_TO_READ_AFTER_EOF
  159, // TIMEOUT_EXCEEDED
  160, // TOO_SLOW
  173, // CANNOT_ALLOCATE_MEMORY
  202, // TOO_MANY_SIMULTANEOUS_QUERIES
  203, // NO_FREE_CONNECTION
  209, // SOCKET_TIMEOUT
  210, // NETWORK_ERROR
  225, // NO_ZOOKEEPER
  236, // ABORTED
  241, // MEMORY_LIMIT_EXCEEDED
  242, // TABLE_IS_READ_ONLY (a replica without its keeper)
  252, // TOO_MANY_PARTS
  279, // ALL_CONNECTION_TRIES_FAILED
  285, // TOO_FEW_LIVE_REPLICAS
  319, // UNKNOWN_STATUS_OF_INSERT
  394, // QUERY_WAS_CANCELLED (a server shutting down; our own KILL of a lost insert)
  425, // SYSTEM_ERROR
  439, // CANNOT_SCHEDULE_TASK
  999, // KEEPER_EXCEPTION
]);

/** Server answers that say "this data (or the query built from it) cannot be taken". */
const CONTENT_CODES = new Set([
  6, // CANNOT_PARSE_TEXT
  25, // CANNOT_PARSE_ESCAPE_SEQUENCE (a lone surrogate in a JSON string)
  26, // CANNOT_PARSE_QUOTED_STRING
  27, // CANNOT_PARSE_INPUT_ASSERTION_FAILED
  38, // CANNOT_PARSE_DATE
  41, // CANNOT_PARSE_DATETIME
  53, // TYPE_MISMATCH
  62, // SYNTAX_ERROR (a read-back query over max_query_size)
  69, // ARGUMENT_OUT_OF_BOUND
  70, // CANNOT_CONVERT_TYPE
  72, // CANNOT_PARSE_NUMBER
  117, // INCORRECT_DATA
  131, // TOO_LARGE_STRING_SIZE
  167, // TOO_DEEP_AST
  168, // TOO_BIG_AST
  306, // TOO_DEEP_RECURSION
  321, // VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE
  407, // DECIMAL_OVERFLOW
]);

/** Messages of failures with no code: a hung-up socket, @clickhouse/client's request timeout. */
const NETWORK_MESSAGE = /socket hang up|timeout error|request timed out|other side closed|connect ECONNREFUSED/i;

/**
 * The kind of a failed ClickHouse request (or of a socket error on the way
 * to it). An AgentledgerError (a TimeoutError of `within`) says its own kind.
 */
export function clickhouseFailure(err: unknown): FailureKind {
  const stated = statedKind(err);
  if (stated !== undefined) return stated;
  const code = clickhouseErrorCode(err);
  if (code !== undefined) return TRANSIENT_CODES.has(code) ? 'transient' : CONTENT_CODES.has(code) ? 'content' : 'fatal';
  for (const e of causes(err)) {
    const sys = (e as { code?: unknown }).code;
    if (typeof sys === 'string' && SOCKET_CODES.has(sys)) return 'transient';
    const message = (e as { message?: unknown }).message;
    if (typeof message === 'string' && NETWORK_MESSAGE.test(message)) return 'transient';
  }
  return 'fatal';
}

/**
 * The ClickHouse error code of a failed request, or undefined when the failure
 * is not ClickHouse's (network, timeout). @clickhouse/client parses current
 * servers' "Code: 57. DB::Exception" into `code`; 18.16 writes
 * "Code: 57, e.displayText() = DB::Exception", which it leaves in the message.
 */
export function clickhouseErrorCode(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && /^\d+$/.test(code)) return Number(code);
  if (typeof code === 'number') return code;
  const message = (err as { message?: unknown }).message;
  const match = typeof message === 'string' ? /\bCode: (\d+)[.,]/.exec(message) : null;
  return match ? Number(match[1]) : undefined;
}

const KINDS = { transient: TransientError, content: ContentError, fatal: FatalError } as const;

/**
 * A failed ClickHouse request as the rest of the code sees it: an error of
 * its kind (src/errors/errors.ts), carrying the server's code and the
 * original as `cause`, its message unchanged. Made once, by the client
 * (client.ts); an error typed already is left as it is.
 */
export function typedClickHouseError(err: unknown): AgentledgerError {
  if (err instanceof AgentledgerError) return err;
  const code = clickhouseErrorCode(err);
  return new KINDS[clickhouseFailure(err)](err instanceof Error ? err.message : String(err), { cause: err, ...(code === undefined ? {} : { code }) });
}

// What the migrations ask of a failure: answered here, where the codes are read.

/**
 * The error codes ClickHouse answers an ADD COLUMN of an existing column
 * with: 44 ILLEGAL_COLUMN on 18.16, 15 DUPLICATE_COLUMN on current versions
 * (both seen: test/integration/migrate.test.ts, test/modern). 44 also means
 * other things, so the code alone is never enough: the column is then
 * looked up (migrate.ts, applyStatement).
 */
const COLUMN_EXISTS_CODES: ReadonlySet<number> = new Set([15, 44]);

/** An ADD COLUMN refused in a way that may mean its column exists (COLUMN_EXISTS_CODES; the caller looks it up). */
export const columnMayExist = (err: unknown): boolean => COLUMN_EXISTS_CODES.has(clickhouseErrorCode(err) ?? -1);

/** ClickHouse error 57 is TABLE_ALREADY_EXISTS on 18.16 and current versions. */
export const tableExists = (err: unknown): boolean => clickhouseErrorCode(err) === 57;

/** ClickHouse's FUNCTION_THROW_IF_VALUE_IS_NON_ZERO: a migration check (`SELECT throwIf(…)`) found what it guards against. */
export const checkFailed = (err: unknown): boolean => clickhouseErrorCode(err) === 395;

/** The code of `err` when it is one of `codes` (a plan's codes, e.g. a statement checked after it fails), else undefined. */
export function answeredWith(err: unknown, codes: readonly number[]): number | undefined {
  const code = clickhouseErrorCode(err);
  return code !== undefined && codes.includes(code) ? code : undefined;
}

/** ClickHouse's TIMEOUT_EXCEEDED: also what an ON CLUSTER statement answers when servers have not run it in time. */
const TIMEOUT_EXCEEDED = 159;
const WATCHING_TASK = /Watching task (\/\S+?\/(query-\d+)) is executing longer than distributed_ddl_task_timeout/;

/** The task's ZooKeeper path of an ON CLUSTER timeout, or undefined for any other failure. */
export function ddlTimeoutTask(err: unknown): string | undefined {
  if (clickhouseErrorCode(err) !== TIMEOUT_EXCEEDED) return undefined;
  return WATCHING_TASK.exec(err instanceof Error ? err.message : String(err))?.[1];
}
