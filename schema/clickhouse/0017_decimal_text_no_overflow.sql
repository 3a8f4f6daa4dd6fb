-- Exact Decimal128 text that never overflows 18.16's integer writer.
--
-- 0012 rendered a sum d as
--   if(abs(d) < e18, toString(d), concat(toString(hi), substring(toString(abs(lo) + e18), 2)))
-- with hi = intDiv(d, e18) and lo = d - hi * e18. ClickHouse evaluates both
-- branches of if() for every row, so toString(d) also ran on the sums of 21
-- digits and more. On 18.16 that is worse than wrong text: its integer
-- writer (IO/WriteIntText.h) writes the digits into a stack array with room
-- for 20 when the output buffer is near its end, and toString's buffer
-- usually is, so every such call wrote past that array. The server then
-- crashed, seconds later and elsewhere (a segfault in Poco's HTTP code or in
-- jemalloc), or kept running and answered std::bad_weak_ptr (code 1001) to
-- one query in two until restarted.
--
-- The first branch now writes lo, which equals d where it is taken
-- (|d| < 10^18 makes hi 0) and is below 10^18 everywhere, so no value of
-- more than 20 digits is ever written: hi has at most 20 (|d| < 10^38), lo
-- 18, |lo| + 10^18 19. The text is the same as 0012's wherever 0012's was
-- right. The same expression renders the reader queries' sums
-- (src/sink/clickhouse/queries); test/integration/decimal-text.test.ts
-- checks that no SQL file writes a sum any other way.
--
-- Each view is 0012's, with the same columns, names and types, dropped and
-- created again (released migrations are never edited); a run killed
-- between a DROP and its CREATE is finished by the next run.

-- craze_sessions (0004): as there, spend and tokens summed per session.
DROP TABLE IF EXISTS craze_sessions;

CREATE VIEW IF NOT EXISTS craze_sessions AS
WITH toDecimal128('1000000000000000000', 0) AS e18
SELECT
    session_id,
    incarnations,
    if(abs(cost_total) < e18, toString(cost_total - intDiv(cost_total, e18) * e18),
       concat(toString(intDiv(cost_total, e18)), substring(toString(abs(cost_total - intDiv(cost_total, e18) * e18) + e18), 2))) AS cost_pico,
    if(abs(input_total) < e18, toString(input_total - intDiv(input_total, e18) * e18),
       concat(toString(intDiv(input_total, e18)), substring(toString(abs(input_total - intDiv(input_total, e18) * e18) + e18), 2))) AS input_tokens,
    if(abs(output_total) < e18, toString(output_total - intDiv(output_total, e18) * e18),
       concat(toString(intDiv(output_total, e18)), substring(toString(abs(output_total - intDiv(output_total, e18) * e18) + e18), 2))) AS output_tokens,
    if(abs(reasoning_total) < e18, toString(reasoning_total - intDiv(reasoning_total, e18) * e18),
       concat(toString(intDiv(reasoning_total, e18)), substring(toString(abs(reasoning_total - intDiv(reasoning_total, e18) * e18) + e18), 2))) AS reasoning_tokens,
    if(abs(cache_read_total) < e18, toString(cache_read_total - intDiv(cache_read_total, e18) * e18),
       concat(toString(intDiv(cache_read_total, e18)), substring(toString(abs(cache_read_total - intDiv(cache_read_total, e18) * e18) + e18), 2))) AS cache_read_tokens,
    if(abs(cache_creation_total) < e18, toString(cache_creation_total - intDiv(cache_creation_total, e18) * e18),
       concat(toString(intDiv(cache_creation_total, e18)), substring(toString(abs(cache_creation_total - intDiv(cache_creation_total, e18) * e18) + e18), 2))) AS cache_creation_tokens,
    unpriced_reports,
    models,
    provider,
    cwd,
    first_seen,
    last_seen
FROM
(
    SELECT
        session_id,
        uniqExact(incarnation) AS incarnations,
        sumIf(toDecimal128(cost_pico, 0), report = 1) AS cost_total,
        sumIf(toDecimal128(input_tokens, 0), report = 1) AS input_total,
        sumIf(toDecimal128(output_tokens, 0), report = 1) AS output_total,
        sumIf(toDecimal128(reasoning_tokens, 0), report = 1) AS reasoning_total,
        sumIf(toDecimal128(cache_read_tokens, 0), report = 1) AS cache_read_total,
        sumIf(toDecimal128(cache_creation_tokens, 0), report = 1) AS cache_creation_total,
        countIf(report = 1 AND unpriced = 1) AS unpriced_reports,
        groupUniqArrayIf(model, model != '') AS models,
        anyIf(provider, provider != '') AS provider,
        anyIf(cwd, cwd != '') AS cwd,
        min(at) AS first_seen,
        max(at) AS last_seen
    FROM craze_events FINAL
    WHERE verdict != 'malformed'
    GROUP BY session_id
) AS sessions;

-- spend_by_hour (0010).
DROP TABLE IF EXISTS spend_by_hour;

CREATE VIEW IF NOT EXISTS spend_by_hour AS
WITH toDecimal128('1000000000000000000', 0) AS e18
SELECT hour, source, provider, model, calls,
       if(abs(input_total) < e18, toString(input_total - intDiv(input_total, e18) * e18),
          concat(toString(intDiv(input_total, e18)), substring(toString(abs(input_total - intDiv(input_total, e18) * e18) + e18), 2))) AS input_tokens_sum,
       if(abs(output_total) < e18, toString(output_total - intDiv(output_total, e18) * e18),
          concat(toString(intDiv(output_total, e18)), substring(toString(abs(output_total - intDiv(output_total, e18) * e18) + e18), 2))) AS output_tokens_sum,
       if(abs(cost_total) < e18, toString(cost_total - intDiv(cost_total, e18) * e18),
          concat(toString(intDiv(cost_total, e18)), substring(toString(abs(cost_total - intDiv(cost_total, e18) * e18) + e18), 2))) AS cost_pico_usd,
       unpriced_calls
FROM
(
    SELECT toStartOfHour(time) AS hour, source, provider, model,
           count() AS calls,
           sum(toDecimal128(input_tokens, 0)) AS input_total,
           sum(toDecimal128(output_tokens, 0)) AS output_total,
           sum(toDecimal128(cost_pico, 0)) AS cost_total,
           countIf(unpriced_call = 1) AS unpriced_calls
    FROM spend_calls
    GROUP BY hour, source, provider, model
) AS sums;

-- spend_by_day (0010).
DROP TABLE IF EXISTS spend_by_day;

CREATE VIEW IF NOT EXISTS spend_by_day AS
WITH toDecimal128('1000000000000000000', 0) AS e18
SELECT day, source, provider, model, calls,
       if(abs(input_total) < e18, toString(input_total - intDiv(input_total, e18) * e18),
          concat(toString(intDiv(input_total, e18)), substring(toString(abs(input_total - intDiv(input_total, e18) * e18) + e18), 2))) AS input_tokens_sum,
       if(abs(output_total) < e18, toString(output_total - intDiv(output_total, e18) * e18),
          concat(toString(intDiv(output_total, e18)), substring(toString(abs(output_total - intDiv(output_total, e18) * e18) + e18), 2))) AS output_tokens_sum,
       if(abs(cost_total) < e18, toString(cost_total - intDiv(cost_total, e18) * e18),
          concat(toString(intDiv(cost_total, e18)), substring(toString(abs(cost_total - intDiv(cost_total, e18) * e18) + e18), 2))) AS cost_pico_usd,
       unpriced_calls
FROM
(
    SELECT toDate(time) AS day, source, provider, model,
           count() AS calls,
           sum(toDecimal128(input_tokens, 0)) AS input_total,
           sum(toDecimal128(output_tokens, 0)) AS output_total,
           sum(toDecimal128(cost_pico, 0)) AS cost_total,
           countIf(unpriced_call = 1) AS unpriced_calls
    FROM spend_calls
    GROUP BY day, source, provider, model
) AS sums;

-- spend_by_loop_name (0010).
DROP TABLE IF EXISTS spend_by_loop_name;

CREATE VIEW IF NOT EXISTS spend_by_loop_name AS
WITH toDecimal128('1000000000000000000', 0) AS e18
SELECT name, loops, calls,
       if(abs(input_total) < e18, toString(input_total - intDiv(input_total, e18) * e18),
          concat(toString(intDiv(input_total, e18)), substring(toString(abs(input_total - intDiv(input_total, e18) * e18) + e18), 2))) AS input_tokens_sum,
       if(abs(output_total) < e18, toString(output_total - intDiv(output_total, e18) * e18),
          concat(toString(intDiv(output_total, e18)), substring(toString(abs(output_total - intDiv(output_total, e18) * e18) + e18), 2))) AS output_tokens_sum,
       if(abs(cost_total) < e18, toString(cost_total - intDiv(cost_total, e18) * e18),
          concat(toString(intDiv(cost_total, e18)), substring(toString(abs(cost_total - intDiv(cost_total, e18) * e18) + e18), 2))) AS cost_pico_usd
FROM
(
    SELECT name, count() AS loops, sum(loop_calls) AS calls,
           sum(loop_input_tokens) AS input_total,
           sum(loop_output_tokens) AS output_total,
           sum(loop_cost_pico) AS cost_total
    FROM
    (
        SELECT loop_id, name FROM runtime_loops
    ) AS named
    ANY LEFT JOIN
    (
        SELECT loop_id, count() AS loop_calls,
               sum(toDecimal128(input_tokens, 0)) AS loop_input_tokens,
               sum(toDecimal128(output_tokens, 0)) AS loop_output_tokens,
               sum(toDecimal128(cost_pico, 0)) AS loop_cost_pico
        FROM runtime_spend
        WHERE kind_class = 'ModelCalled' AND verified AND NOT replayed
        GROUP BY loop_id
    ) AS spent USING loop_id
    GROUP BY name
) AS sums;

-- unverified_spend (0010).
DROP TABLE IF EXISTS unverified_spend;

CREATE VIEW IF NOT EXISTS unverified_spend AS
WITH toDecimal128('1000000000000000000', 0) AS e18
SELECT loop_id, verdict, calls,
       if(abs(cost_total) < e18, toString(cost_total - intDiv(cost_total, e18) * e18),
          concat(toString(intDiv(cost_total, e18)), substring(toString(abs(cost_total - intDiv(cost_total, e18) * e18) + e18), 2))) AS cost_pico_usd,
       first_time,
       last_time
FROM
(
    SELECT loop_id, verdict, count() AS calls,
           sum(toDecimal128(cost_pico, 0)) AS cost_total,
           min(time) AS first_time,
           max(time) AS last_time
    FROM runtime_spend
    WHERE kind_class = 'ModelCalled' AND NOT verified AND NOT replayed
    GROUP BY loop_id, verdict
) AS sums;

-- loop_reconciliation (0011): the three differences are computed beside the
-- sums (gaps), the rest as there.
DROP TABLE IF EXISTS loop_reconciliation;

CREATE VIEW IF NOT EXISTS loop_reconciliation AS
WITH toDecimal128('1000000000000000000', 0) AS e18
SELECT
    loop_id,
    if(abs(model_cost) < e18, toString(model_cost - intDiv(model_cost, e18) * e18),
       concat(toString(intDiv(model_cost, e18)), substring(toString(abs(model_cost - intDiv(model_cost, e18) * e18) + e18), 2))) AS model_cost_pico,
    if(abs(model_budget) < e18, toString(model_budget - intDiv(model_budget, e18) * e18),
       concat(toString(intDiv(model_budget, e18)), substring(toString(abs(model_budget - intDiv(model_budget, e18) * e18) + e18), 2))) AS model_budget_pico,
    if(abs(budget) < e18, toString(budget - intDiv(budget, e18) * e18),
       concat(toString(intDiv(budget, e18)), substring(toString(abs(budget - intDiv(budget, e18) * e18) + e18), 2))) AS budget_pico,
    has_total_spend,
    if(abs(total_spend) < e18, toString(total_spend - intDiv(total_spend, e18) * e18),
       concat(toString(intDiv(total_spend, e18)), substring(toString(abs(total_spend - intDiv(total_spend, e18) * e18) + e18), 2))) AS total_spend_pico,
    has_child_spend,
    if(abs(child_spend) < e18, toString(child_spend - intDiv(child_spend, e18) * e18),
       concat(toString(intDiv(child_spend, e18)), substring(toString(abs(child_spend - intDiv(child_spend, e18) * e18) + e18), 2))) AS child_spend_pico,
    if(abs(model_gap) < e18, toString(model_gap - intDiv(model_gap, e18) * e18),
       concat(toString(intDiv(model_gap, e18)), substring(toString(abs(model_gap - intDiv(model_gap, e18) * e18) + e18), 2))) AS model_minus_model_budget_pico,
    if(abs(total_spend_gap) < e18, toString(total_spend_gap - intDiv(total_spend_gap, e18) * e18),
       concat(toString(intDiv(total_spend_gap, e18)), substring(toString(abs(total_spend_gap - intDiv(total_spend_gap, e18) * e18) + e18), 2))) AS budget_minus_total_spend_pico,
    if(abs(child_spend_gap) < e18, toString(child_spend_gap - intDiv(child_spend_gap, e18) * e18),
       concat(toString(intDiv(child_spend_gap, e18)), substring(toString(abs(child_spend_gap - intDiv(child_spend_gap, e18) * e18) + e18), 2))) AS budget_minus_child_spend_pico,
    abs(toFloat64(model_cost - model_budget)) > greatest(1e6, abs(toFloat64(model_budget)) * 1e-9) AS model_disagrees,
    has_total_spend AND abs(toFloat64(budget - total_spend)) > greatest(1e6, abs(toFloat64(total_spend)) * 1e-9) AS total_spend_disagrees,
    has_child_spend AND abs(toFloat64(budget - child_spend)) > greatest(1e6, abs(toFloat64(child_spend)) * 1e-9) AS child_spend_disagrees,
    model_disagrees OR total_spend_disagrees OR child_spend_disagrees AS disagrees
FROM
(
    SELECT loop_id, model_cost, model_budget, budget, has_total_spend, total_spend, has_child_spend, child_spend,
           model_cost - model_budget AS model_gap,
           budget - total_spend AS total_spend_gap,
           budget - child_spend AS child_spend_gap
    FROM
    (
        SELECT loop_id, model_cost, model_budget, budget, has_total_spend, total_spend, has_child_spend, toDecimal128(child_spend_reported, 0) AS child_spend
        FROM
        (
            SELECT
                loop_id,
                sumIf(toDecimal128(cost_pico, 0), kind_class = 'ModelCalled' AND verified AND seq > replayed_to) AS model_cost,
                sumIf(toDecimal128(budget_pico, 0), kind_class = 'BudgetCharged' AND verified AND action_type = 'model' AND seq > replayed_to) AS model_budget,
                sumIf(toDecimal128(budget_pico, 0), kind_class = 'BudgetCharged' AND verified) AS budget,
                countIf(kind_class = 'LoopFinished' AND spend_raw != '') > 0 AS has_total_spend,
                toDecimal128(argMaxIf(spend_pico, seq, kind_class = 'LoopFinished'), 0) AS total_spend
            FROM
            (
                SELECT loop_id, seq, kind_class, cost_pico, budget_pico, action_type, spend_raw, spend_pico,
                       verdict IN ('ok', 'gap', 'time_regression') AS verified
                FROM envelopes FINAL
                WHERE kind_class IN ('ModelCalled', 'BudgetCharged', 'LoopFinished') AND verdict NOT IN ('malformed', 'fork')
            ) AS ledger_rows
            ANY LEFT JOIN (SELECT loop_id, replayed_to FROM loop_forks) AS forks USING loop_id
            GROUP BY loop_id
        ) AS own
        ANY LEFT JOIN
        (
            -- The parent's report, by child (a fork's replayed report names its source's child: left out).
            SELECT child_loop_id AS loop_id, argMax(spend_pico, seq) AS child_spend_reported, 1 AS has_child_spend
            FROM
            (
                SELECT loop_id AS reporter, seq, child_loop_id, spend_pico
                FROM envelopes FINAL
                WHERE kind_class = 'SubAgentCompleted' AND child_loop_id != '' AND spend_raw != '' AND verdict NOT IN ('malformed', 'fork')
            ) AS reports
            ANY LEFT JOIN (SELECT loop_id AS reporter, replayed_to FROM loop_forks) AS forks USING reporter
            WHERE seq > replayed_to
            GROUP BY child_loop_id
        ) AS reported USING loop_id
    ) AS sides
) AS gaps;
