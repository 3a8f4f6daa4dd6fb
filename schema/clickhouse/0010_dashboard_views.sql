-- Views for dashboards (README, "Views for dashboards"): spend over time by
-- source, provider and model, spend by loop name, sub-agent outcomes, tool
-- error rates, convergence warnings, and the model cost that was not counted.
--
-- Plain views, computed when read (DESIGN.md §4: a materialized view fires on
-- a retried or zombie insert too). What counts is not defined again here:
-- runtime spend is read from runtime_spend (verified, not replayed: 0009),
-- craze spend from craze_spend (0004), loop names from runtime_loops. The
-- facts no earlier view carries (sub-agent completions, tool calls,
-- convergence warnings) are read from envelopes FINAL with runtime_loops'
-- rules: malformed rows and second versions aside, and a fork's replayed
-- events (seq <= loop_forks.replayed_to) left to its source.
--
-- Runs on ClickHouse 18.16 and current ClickHouse: one JOIN per SELECT,
-- nested; no alias repeats a column name of what its SELECT reads (18.16
-- would read the alias inside the aggregate); money and tokens summed as
-- Decimal128 and read as text, exact at any size.

-- Every counted model call, of either source, with the provider and model it
-- is summed under: the loop runtime's verified, not replayed ModelCalled
-- rows, and craze's counted usage reports with their session's provider (as
-- craze_spend_groups.sql reads it). A ModelCalled always carries its cost, so
-- no runtime call is unpriced; an unpriced craze report's cost is a floor.
CREATE VIEW IF NOT EXISTS spend_calls AS
SELECT source, time, provider, model, input_tokens, output_tokens, cost_pico, unpriced_call
FROM
(
    SELECT 'runtime' AS source, time, provider, model, input_tokens, output_tokens, cost_pico, toUInt8(0) AS unpriced_call
    FROM runtime_spend
    WHERE kind_class = 'ModelCalled' AND verified AND NOT replayed
    UNION ALL
    SELECT 'craze' AS source, at AS time, provider, model, input_tokens, output_tokens, cost_pico, unpriced AS unpriced_call
    FROM
    (
        SELECT session_id, at, model, input_tokens, output_tokens, cost_pico, unpriced
        FROM craze_spend
    ) AS reports
    ANY LEFT JOIN (SELECT session_id, provider FROM craze_sessions) AS sessions USING session_id
) AS calls_of_both;

-- Spend per hour (its start, UTC), source ('runtime' or 'craze'), provider and model.
CREATE VIEW IF NOT EXISTS spend_by_hour AS
SELECT toStartOfHour(time) AS hour, source, provider, model,
       count() AS calls,
       toString(sum(toDecimal128(input_tokens, 0))) AS input_tokens_sum,
       toString(sum(toDecimal128(output_tokens, 0))) AS output_tokens_sum,
       toString(sum(toDecimal128(cost_pico, 0))) AS cost_pico_usd,
       countIf(unpriced_call = 1) AS unpriced_calls
FROM spend_calls
GROUP BY hour, source, provider, model;

-- The same per UTC day.
CREATE VIEW IF NOT EXISTS spend_by_day AS
SELECT toDate(time) AS day, source, provider, model,
       count() AS calls,
       toString(sum(toDecimal128(input_tokens, 0))) AS input_tokens_sum,
       toString(sum(toDecimal128(output_tokens, 0))) AS output_tokens_sum,
       toString(sum(toDecimal128(cost_pico, 0))) AS cost_pico_usd,
       countIf(unpriced_call = 1) AS unpriced_calls
FROM spend_calls
GROUP BY day, source, provider, model;

-- Per loop name (LoopStarted.name: a task's name for a root, the sub-agent's
-- definition for a child; a fork has its source's): how many loops, and their
-- counted model spend. Loops without a counted call count with zeros.
CREATE VIEW IF NOT EXISTS spend_by_loop_name AS
SELECT name, count() AS loops, sum(loop_calls) AS calls,
       toString(sum(loop_input_tokens)) AS input_tokens_sum,
       toString(sum(loop_output_tokens)) AS output_tokens_sum,
       toString(sum(loop_cost_pico)) AS cost_pico_usd
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
GROUP BY name;

-- Sub-agents by SubAgentCompleted.definition and outcome_kind, as their
-- parents reported them.
CREATE VIEW IF NOT EXISTS subagent_outcomes AS
SELECT definition, outcome, count() AS subagents
FROM
(
    SELECT loop_id, seq, definition, outcome
    FROM envelopes FINAL
    WHERE kind_class = 'SubAgentCompleted' AND verdict NOT IN ('malformed', 'fork')
) AS completed
ANY LEFT JOIN (SELECT loop_id, replayed_to FROM loop_forks) AS forks USING loop_id
WHERE seq > replayed_to
GROUP BY definition, outcome;

-- Per tool: ToolCalled count, those with is_error, and their share (a rate,
-- so a Float64).
CREATE VIEW IF NOT EXISTS tool_error_rates AS
SELECT tool, count() AS calls, countIf(tool_is_error = 1) AS errors, countIf(tool_is_error = 1) / count() AS error_share
FROM
(
    SELECT loop_id, seq, tool, tool_is_error
    FROM envelopes FINAL
    WHERE kind_class = 'ToolCalled' AND verdict NOT IN ('malformed', 'fork')
) AS tool_calls
ANY LEFT JOIN (SELECT loop_id, replayed_to FROM loop_forks) AS forks USING loop_id
WHERE seq > replayed_to
GROUP BY tool;

-- ConvergenceWarning per detector and UTC day: warnings, and the loops that had one.
CREATE VIEW IF NOT EXISTS convergence_warnings AS
SELECT detector, toDate(time) AS day, count() AS warnings, uniqExact(loop_id) AS loops
FROM
(
    SELECT loop_id, seq, time, detector
    FROM envelopes FINAL
    WHERE kind_class = 'ConvergenceWarning' AND verdict NOT IN ('malformed', 'fork')
) AS warned
ANY LEFT JOIN (SELECT loop_id, replayed_to FROM loop_forks) AS forks USING loop_id
WHERE seq > replayed_to
GROUP BY detector, day;

-- What was not counted, and why: per loop and verdict (mismatch, fork: a
-- second version, regression), the ModelCalled rows whose link did not
-- verify and the cost they carry (a fork's replays aside, as in spend).
CREATE VIEW IF NOT EXISTS unverified_spend AS
SELECT loop_id, verdict, count() AS calls,
       toString(sum(toDecimal128(cost_pico, 0))) AS cost_pico_usd,
       min(time) AS first_time,
       max(time) AS last_time
FROM runtime_spend
WHERE kind_class = 'ModelCalled' AND NOT verified AND NOT replayed
GROUP BY loop_id, verdict;
