/** The month of loop-runtime envelopes the bench generates inside ClickHouse (loadSql). */

import { ENVELOPE_FACTS, SLOT_NAMES, slotSql, type FactName } from '../../src/rows/envelope-facts.js';
import { END_UNIX } from './window.js';

/** The runtime's price table (src/demo/traffic/spend-plan.ts), in picodollars per token. */
export const MODELS = [
  { provider: 'anthropic', model: 'claude-sonnet-4-5', inPico: 3_000_000, outPico: 15_000_000 },
  { provider: 'anthropic', model: 'claude-haiku-4-5', inPico: 1_000_000, outPico: 5_000_000 },
  { provider: 'openai', model: 'gpt-4.1', inPico: 2_000_000, outPico: 8_000_000 },
  { provider: 'openai', model: 'gpt-4.1-mini', inPico: 400_000, outPico: 1_600_000 },
  { provider: 'google', model: 'gemini-2.5-flash', inPico: 300_000, outPico: 2_500_000 },
  { provider: 'ollama', model: 'llama3.1:8b', inPico: 0, outPico: 0 },
] as const;
/** A loop's main model, weighted: sonnet 6/20, haiku 4/20, gpt-4.1, mini and gemini 3/20 each, ollama 1/20. */
export const PRIMARY_MODEL = [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5];
export const TASKS = ['fix-flaky-tests', 'refactor-auth', 'upgrade-deps', 'write-docs', 'triage-issues', 'migrate-db', 'review-pr', 'port-to-go'];
export const DEFINITIONS = ['researcher', 'coder', 'reviewer', 'tester', 'planner'];
export const TOOLS = ['bash', 'read_file', 'write_file', 'grep', 'http_get'];
export const DETECTORS = ['oscillation', 'zero-progress', 'depth'];
export const CHILD_OUTCOMES = ['Completed', 'Failed', 'Completed', 'Stuck', 'Completed', 'BudgetExceeded', 'Completed', 'Completed'];
/** Model calls per BudgetCharged (their sum) and per ToolCalled. */
export const BLOCK = 10;
/** Every FORK_EVERY-th root (index % FORK_EVERY = FORK_EVERY - 1) is a fork of the root before it. */
export const FORK_EVERY = 167;
/** Loops per INSERT on 18.16 (about 1.3M rows at the default shape); 25.8 takes the same statements. */
export const TARGET_CHUNK_ROWS = 1_300_000;

export const sqlArray = (xs: readonly (string | number)[]): string => `[${xs.map((x) => (typeof x === 'number' ? String(x) : `'${x}'`)).join(', ')}]`;

/** The 8 hex digits of loop i's id: i times an odd constant mod 2^32, a bijection, so ids are unique and scattered (loops of one insert do not sit together in the key order). */
export function loopId(i: number): string {
  return `loop-${((BigInt(i) * 2654435761n) % 4294967296n).toString(16).padStart(8, '0')}`;
}

export interface Shape {
  readonly calls: number;
  readonly loops: number;
  readonly days: number;
}

export interface Load {
  readonly roots: number;
  readonly forks: number;
  /** One INSERT … SELECT per chunk of loops, with what it covers. */
  readonly chunks: readonly { readonly fromLoop: number; readonly toLoop: number; readonly sql: string }[];
}

/**
 * The load, as SQL that ClickHouse 18.16 and 25.8 both run to the same rows.
 * Every row is a pure function of (loop index, position in the loop): no
 * randomness, so each run, and each engine, loads the same data.
 *
 * Loops 0..R-1 (R = a quarter) are roots; loop x >= R is a sub-agent of
 * (x - R) div 2, so every parent has two children and depth is at most 2.
 * Loop x makes K(x) model calls, K = calls / loops ± up to 40 in pairs that
 * cancel, so the total is exactly --calls. A loop's envelopes, seq 1, 2, …:
 *   LoopStarted (name, parent, depth), a SubAgentSpawned per child,
 *   blocks of BLOCK ModelCalled + a BudgetCharged of their summed cost
 *   (action_type model) + a ToolCalled (1 in 10 an error), the last block short,
 *   a SubAgentCompleted per child (outcome, child_spend = the child's total),
 *   a ConvergenceWarning in 1 loop of 7, LoopFinished (outcome, total_spend).
 * Every FORK_EVERY-th root is a fork of the root before it: that root's first
 * at_seq envelopes replayed (LoopStarted, its spawns, up to 5 model calls),
 * ForkedFrom, then its own envelopes from its first SubAgentSpawned on. So
 * ledgers reconcile, except in the loops holding one of the 1-in-2000 model
 * calls stored with verdict mismatch.
 * Roots start at scattered times over the days (a fork 2 h after its source),
 * sub-agents 2 min per depth after their root, envelopes 2..24 s apart.
 */
/** The envelopes columns the load writes as they are, in its SELECT's order (as e_<column>). */
const BASE_COLUMNS = [
  'loop_id', 'seq', 'time', 'time_text', 'kind', 'kind_class', 'hash', 'computed_hash', 'payload', 'verdict', 'detail', 'evidence',
  'kafka_topic', 'kafka_partition', 'kafka_offset', 'ingested_at',
] as const;
/** The facts the load computes (e_<fact>); every other reads its default. */
const LOADED_FACTS: ReadonlySet<FactName> = new Set<FactName>([
  'model_provider', 'model_name', 'input_tokens', 'output_tokens', 'cost_pico', 'cost_usd_text', 'duration_ms',
  'budget_pico', 'budget_usd_text', 'action_type', 'loop_name', 'parent_loop_id', 'depth', 'loop_seed', 'config_hash',
  'child_loop_id', 'definition', 'outcome', 'error', 'spend_pico', 'spend_raw', 'spend_usd_text',
  'fork_source', 'fork_at_seq', 'tool', 'tool_is_error', 'detector',
]);

export function loadSql(shape: Shape): Load {
  const N = shape.loops;
  const R = Math.max(1, Math.round(N / 4));
  const q = Math.floor(shape.calls / N);
  const rem = shape.calls % N;
  const A = Math.min(40, q - 1);
  const t0 = END_UNIX - shape.days * 86_400;
  // Room at the end of the window for a fork's 2 h delay, sub-agents' offsets and the longest loop.
  const longest = 2 * (q + 1 + A) + 20;
  const slack = 7_200 + 600 + longest * 24 * 2;
  const window = shape.days * 86_400 - slack;
  if (window < 86_400 / 2) throw new Error(`--days ${shape.days} is too short for ${q} calls per loop`);

  const h = (x: string, salt: number): string => `intHash64(${x} * 7919 + ${salt})`;
  const parent = (x: string): string => `intDiv(${x} - ${R}, 2)`;
  const delta = (x: string): string =>
    A === 0 ? '0' : `(if(${x} % 2 = 1, -1, if(${x} + 1 < ${N}, 1, 0)) * (toInt64(${h(`intDiv(${x}, 2)`, 1)} % ${2 * A + 1}) - ${A}))`;
  const calls = (x: string): string => `(${q} + toInt64(${x} < ${rem}) + ${delta(x)})`;
  const children = (x: string): string => `(toInt64(${R} + 2 * ${x} < ${N}) + toInt64(${R} + 2 * ${x} + 1 < ${N}))`;
  // The divisor is Int64 on purpose: 18.16 types Int64 % 167 as Int8 (the divisor's width, signed) and wraps 166 to -90.
  const isFork = (x: string): string => `(${x} < ${R} AND ${x} % toInt64(${FORK_EVERY}) = ${FORK_EVERY - 1})`;
  const warned = (x: string): string => `toInt64(${h(x, 2)} % 7 = 0)`;
  const depth = (x: string): string => `if(${x} < ${R}, 0, if(${parent(x)} < ${R}, 1, 2))`;
  const root = (x: string): string => `if(${x} < ${R}, ${x}, if(${parent(x)} < ${R}, ${parent(x)}, ${parent(parent(x))}))`;
  const base = (r: string): string => `(${t0} + toInt64(${h(r, 3)} % ${window}))`;
  const rootStart = (r: string): string => `if(${isFork(r)}, ${base(`(${r} - 1)`)} + 7200, ${base(r)})`;
  const start = (x: string): string => `(${rootStart(root(x))} + 120 * ${depth(x)} + 30 * (${x} % 2))`;
  const step = (x: string): string => `(2 + toInt64(${h(x, 5)} % 23))`;
  const id = (x: string): string => `concat('loop-', substring(lower(hex(bitAnd(toUInt64(${x}) * 2654435761, 4294967295) + 4294967296)), 3))`;
  const name = (x: string): string => `if(${x} < ${R}, ${sqlArray(TASKS)}[${h(x, 6)} % ${TASKS.length} + 1], ${sqlArray(DEFINITIONS)}[${h(x, 6)} % ${DEFINITIONS.length} + 1])`;
  const outcome = (x: string): string =>
    `if(${x} < ${R}, if(${x} % 5 = 4, 'Failed', 'Completed'), ${sqlArray(CHILD_OUTCOMES)}[${h(x, 7)} % ${CHILD_OUTCOMES.length} + 1])`;
  const errorOf = (o: string): string =>
    `multiIf(${o} = 'Failed', 'tool bash: exit status 1', ${o} = 'Stuck', 'no progress in 3 iterations (zero-progress)', ${o} = 'BudgetExceeded', 'budget exceeded: usd', '')`;
  // Call j of loop x: its hash, model, tokens and cost.
  const ch = (x: string, j: string): string => `intHash64(${x} * 100003 + ${j})`;
  const model = (x: string, j: string): string => `if(${ch(x, j)} % 10 < 8, ${sqlArray(PRIMARY_MODEL)}[${h(x, 4)} % 20 + 1], bitShiftRight(${ch(x, j)}, 4) % 6)`;
  const tokensIn = (x: string, j: string): string => `toInt64(500 + bitShiftRight(${ch(x, j)}, 8) % 15000)`;
  const tokensOut = (x: string, j: string): string => `toInt64(20 + bitShiftRight(${ch(x, j)}, 24) % 1500)`;
  const cost = (x: string, j: string): string =>
    `(${tokensIn(x, j)} * ${sqlArray(MODELS.map((m) => m.inPico))}[${model(x, j)} + 1] + ${tokensOut(x, j)} * ${sqlArray(MODELS.map((m) => m.outPico))}[${model(x, j)} + 1])`;
  const total = (x: string): string => `arraySum(arrayMap(j -> ${cost(x, 'j')}, range(toUInt64(${calls(x)}))))`;
  const usdText = (pico: string): string => `toString(${pico} / 1e12)`;

  const chunkLoops = Math.max(1, Math.floor(TARGET_CHUNK_ROWS / (shape.calls / N + 14)));
  const chunks: { fromLoop: number; toLoop: number; sql: string }[] = [];
  for (let from = 0; from < N; from += chunkLoops) {
    const n = Math.min(chunkLoops, N - from);
    // The facts are computed by name below (e_<fact>), then stored folded
    // into the slots of their kind (src/rows/envelope-facts.ts slotSql).
    const sql = `INSERT INTO envelopes (${BASE_COLUMNS.join(', ')}, ${SLOT_NAMES.join(', ')})
SELECT ${BASE_COLUMNS.map((c) => `e_${c}`).join(', ')},
       ${SLOT_NAMES.map((slot) => slotSql(slot, (fact) => (LOADED_FACTS.has(fact) ? `e_${fact}` : ENVELOPE_FACTS[fact] === 'String' ? "''" : '0'), 'e_kind_class')).join(',\n       ')}
FROM
(
SELECT
    ${id('L')} AS e_loop_id,
    toUInt64(pos + 1) AS e_seq,
    toDateTime(toUInt32(t)) AS e_time,
    concat(replaceOne(toString(e_time, 'UTC'), ' ', 'T'), 'Z') AS e_time_text,
    k AS e_kind,
    k AS e_kind_class,
    lower(hex(SHA256(concat(e_loop_id, '/', toString(e_seq))))) AS e_hash,
    if(mismatch, lower(hex(SHA256(concat('tampered/', e_loop_id, '/', toString(e_seq))))), e_hash) AS e_computed_hash,
    multiIf(k = 'ModelCalled',
            concat('{"action_id":"act-', toString(j + 1), '-model","duration_ms":', toString(dur), ',"model":"', mdl, '","provider":"', prov,
                   '","request":{"max_tokens":4096,"messages":', toString(2 * j + 2), ',"model":"', mdl,
                   '"},"response":{"content":[{"text":"ok","type":"text"}],"stop_reason":"tool_use"},"usage":{"cost_usd":', ${usdText('c')},
                   ',"in":', toString(tin), ',"out":', toString(tout), '}}'),
            k = 'BudgetCharged', concat('{"action_type":"model","usd":', ${usdText('charge')}, '}'),
            k = 'ToolCalled', concat('{"action_id":"act-', toString(b + 1), '-tool","duration_ms":', toString(dur), ',"is_error":', if(tool_err, 'true', 'false'), ',"tool":"', tl, '"}'),
            concat('{"bench":"', k, '"}')) AS e_payload,
    if(mismatch, 'mismatch', 'ok') AS e_verdict,
    if(mismatch, 'hash mismatch', '') AS e_detail,
    if(mismatch, concat('{"computed":"', e_computed_hash, '"}'), '') AS e_evidence,
    'bench.rollups' AS e_kafka_topic,
    toUInt32(L % 4) AS e_kafka_partition,
    toUInt64(L * 100000 + pos) AS e_kafka_offset,
    toDateTime(toUInt32(t + 2)) AS e_ingested_at,
    if(k = 'ModelCalled', prov, '') AS e_model_provider,
    if(k = 'ModelCalled', mdl, '') AS e_model_name,
    if(k = 'ModelCalled', tin, 0) AS e_input_tokens,
    if(k = 'ModelCalled', tout, 0) AS e_output_tokens,
    if(k = 'ModelCalled', c, 0) AS e_cost_pico,
    if(k = 'ModelCalled', ${usdText('c')}, '') AS e_cost_usd_text,
    if(k IN ('ModelCalled', 'ToolCalled'), dur, 0) AS e_duration_ms,
    if(k = 'BudgetCharged', charge, 0) AS e_budget_pico,
    if(k = 'BudgetCharged', ${usdText('charge')}, '') AS e_budget_usd_text,
    if(k = 'BudgetCharged', 'model', '') AS e_action_type,
    if(k = 'LoopStarted', ${name('src')}, '') AS e_loop_name,
    if(k = 'LoopStarted' AND src >= ${R}, ${id(parent('src'))}, '') AS e_parent_loop_id,
    if(k = 'LoopStarted', ${depth('src')}, 0) AS e_depth,
    if(k = 'LoopStarted', toInt64(${h('src', 10)} % 1000000), 0) AS e_loop_seed,
    if(k = 'LoopStarted', lower(hex(SHA256(concat('config/', ${name('src')})))), '') AS e_config_hash,
    if(k IN ('SubAgentSpawned', 'SubAgentCompleted'), ${id('child')}, '') AS e_child_loop_id,
    if(k IN ('SubAgentSpawned', 'SubAgentCompleted'), ${name('child')}, '') AS e_definition,
    multiIf(k = 'SubAgentCompleted', ${outcome('child')}, k = 'LoopFinished', ${outcome('src')}, '') AS e_outcome,
    ${errorOf('e_outcome')} AS e_error,
    multiIf(k = 'SubAgentCompleted', if(ci = 0, ct0, ct1), k = 'LoopFinished', tot, 0) AS e_spend_pico,
    if(k IN ('SubAgentCompleted', 'LoopFinished'), concat('{"iterations":0,"tokens":0,"usd":', ${usdText('e_spend_pico')}, ',"wall_clock_ms":0}'), '') AS e_spend_raw,
    if(k IN ('SubAgentCompleted', 'LoopFinished'), ${usdText('e_spend_pico')}, '') AS e_spend_usd_text,
    if(k = 'ForkedFrom', ${id('L - 1')}, '') AS e_fork_source,
    toUInt64(if(k = 'ForkedFrom', fork_at, 0)) AS e_fork_at_seq,
    if(k = 'ToolCalled', tl, '') AS e_tool,
    toUInt8(k = 'ToolCalled' AND tool_err) AS e_tool_is_error,
    if(k = 'ConvergenceWarning', ${sqlArray(DETECTORS)}[${h('src', 9)} % ${DETECTORS.length} + 1], '') AS e_detector
FROM
(
    SELECT L, pos, src, q, fork_at, tot, ct0, ct1, kk, nc,
           kk + 2 * intDiv(kk + ${BLOCK - 1}, ${BLOCK}) AS mb,
           q - nc - 1 AS qb, intDiv(greatest(qb, 0), ${BLOCK + 2}) AS b, qb - b * ${BLOCK + 2} AS r, least(${BLOCK}, kk - b * ${BLOCK}) AS gb,
           b * ${BLOCK} + r AS j,
           multiIf(forked_row, 'ForkedFrom', q = 0, 'LoopStarted', q <= nc, 'SubAgentSpawned',
                   q <= nc + mb, multiIf(r < gb, 'ModelCalled', r = gb, 'BudgetCharged', 'ToolCalled'),
                   q <= 2 * nc + mb, 'SubAgentCompleted', q = 2 * nc + mb + 1 AND w = 1, 'ConvergenceWarning', 'LoopFinished') AS k,
           if(q <= nc, q - 1, q - nc - mb - 1) AS ci,
           ${R} + 2 * src + ci AS child,
           if(forked_row, start_l, st + q * sp) AS t,
           ${model('src', 'j')} AS m,
           ${sqlArray(MODELS.map((x) => x.provider))}[m + 1] AS prov,
           ${sqlArray(MODELS.map((x) => x.model))}[m + 1] AS mdl,
           ${tokensIn('src', 'j')} AS tin,
           ${tokensOut('src', 'j')} AS tout,
           tin * ${sqlArray(MODELS.map((x) => x.inPico))}[m + 1] + tout * ${sqlArray(MODELS.map((x) => x.outPico))}[m + 1] AS c,
           k = 'ModelCalled' AND ${ch('src', 'j')} % 2000 = 7 AS mismatch,
           toInt64(300 + bitShiftRight(${ch('src', 'j')}, 40) % 20000) AS dur,
           arraySum(arrayMap(i -> ${cost('src', `(b * ${BLOCK} + i)`)}, range(toUInt64(greatest(0, gb))))) AS charge,
           ${sqlArray(TOOLS)}[${h(`(src * 1000 + b)`, 8)} % ${TOOLS.length} + 1] AS tl,
           ${h(`(src * 1000 + b)`, 11)} % 10 = 0 AS tool_err
    FROM
    (
        -- Per envelope: whose envelope it is (src: the loop, or for a fork's replays its source) and where in that loop (q).
        SELECT L, toInt64(p) AS pos, fork_at, tot, ct0, ct1, start_l,
               is_fork AND pos < fork_at AS replayed_row,
               is_fork AND pos = fork_at AS forked_row,
               if(replayed_row, L - 1, L) AS src,
               if(is_fork AND pos > fork_at, pos - fork_at, pos) AS q,
               if(replayed_row, k_s, k_l) AS kk,
               if(replayed_row, nc_s, nc_l) AS nc,
               if(replayed_row, w_s, w_l) AS w,
               if(replayed_row, start_s, start_l) AS st,
               if(replayed_row, step_s, step_l) AS sp
        FROM
        (
            -- Per loop L, and for a fork its source S = L - 1: calls, children, warning, start, step; totals; envelopes.
            SELECT toInt64(number) + ${from} AS L,
                   ${isFork('L')} AS is_fork,
                   ${calls('L')} AS k_l, ${calls('(L - 1)')} AS k_s,
                   ${children('L')} AS nc_l, ${children('(L - 1)')} AS nc_s,
                   ${warned('L')} AS w_l, ${warned('(L - 1)')} AS w_s,
                   ${start('L')} AS start_l, ${start('(L - 1)')} AS start_s,
                   ${step('L')} AS step_l, ${step('(L - 1)')} AS step_s,
                   if(is_fork, 1 + nc_s + least(k_s, 5), 0) AS fork_at,
                   2 + 2 * nc_l + k_l + 2 * intDiv(k_l + ${BLOCK - 1}, ${BLOCK}) + w_l + fork_at AS n,
                   arraySum(arrayMap(j -> ${cost('L', 'j')}, range(toUInt64(k_l)))) AS tot,
                   ${total(`(${R} + 2 * L)`)} AS ct0,
                   ${total(`(${R} + 2 * L + 1)`)} AS ct1
            FROM numbers(${n})
        )
        ARRAY JOIN range(toUInt64(n)) AS p
    )
)
)
SETTINGS max_block_size = 4096`;
    chunks.push({ fromLoop: from, toLoop: from + n, sql });
  }
  let forks = 0;
  for (let x = FORK_EVERY - 1; x < R; x += FORK_EVERY) forks++;
  return { roots: R, forks, chunks };
}

/**
 * What the load wrote, in a few sums both engines compute the same way: equal
 * on 18.16 and 25.8 when both loaded the same shape, so the two timings are of
 * the same data. (Payloads are left out: Float64 texts may differ between versions.)
 */
export const FINGERPRINT_SQL = `SELECT concat(toString(count()), ' rows, ', toString(uniqExact(loop_id)), ' loops, ', toString(countIf(kind_class = 'ModelCalled')), ' ModelCalled (',
  toString(countIf(verdict = 'mismatch')), ' mismatch), ', toString(countIf(kind_class = 'ForkedFrom')), ' forks, cost ', toString(sum(cost_pico)), ', budget ', toString(sum(budget_pico)),
  ', spend ', toString(sum(spend_pico)), ', seq ', toString(sum(seq)), ', time ', toString(sum(toUInt64(time))), ', ids ', toString(sum(cityHash64(loop_id, parent_loop_id, child_loop_id, fork_source)))) AS fingerprint
FROM envelopes`;
