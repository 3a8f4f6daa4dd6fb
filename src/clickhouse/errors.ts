/**
 * What a failed ClickHouse request means for the one who made it: try again
 * later (transient), the data sent was refused (content: the same rows fail
 * the same way every time, so only setting them aside helps), or anything
 * else (fatal: a wrong setting, a missing right, a bug; retrying forever
 * would hide it). Unknown is fatal on purpose: a supervisor restarting a
 * process that says why is better than a consumer paused in silence.
 */
import { causes, SOCKET_CODES, statedKind, type FailureKind } from '../observability/errors.js';
import { clickhouseErrorCode } from './client.js';

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
