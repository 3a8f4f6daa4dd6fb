-- The page's chain cards (GET /api/overview), from chain_violations_now
-- (migration 0021: the chain_violations rows, each key as FINAL keeps it,
-- kept by the rollup sweep for loops not changed since, the 0019 logic by
-- primary key for the others):
-- - violations: all of them;
-- - the unverified model cost: ModelCalled among them whose own link did not
--   verify (mismatch, fork: a second version, regression), timed at or after
--   {since} (Unix seconds), a fork's replays aside (loop_replays, 0021), as
--   unverified_spend counts them; filtered by model
--   and loop name (loop_roots), '' for all.
-- One JOIN per level (18.16 has one per SELECT); the aggregates are named
-- apart from the columns, or 18.16 reads its PREWHERE on the aggregate. Cost is Decimal128 in two
-- pieces (docs/spend.md "Exact money text").
-- param: since UInt32 1762041600
-- param: model String ''
-- param: name String ''
SELECT toString(violations) AS violations_text, toString(unverified_calls) AS calls_text,
       decimal_text(cost) AS cost_text
FROM
(
    SELECT count() AS violations, countIf(counted) AS unverified_calls, sumIf(toDecimal128(flag_cost, 0), counted) AS cost
    FROM
    (
        SELECT flag_cost,
               flag_verdict IN ('mismatch', 'fork', 'regression') AND flag_kind = 'ModelCalled' AND flag_time >= toDateTime({since:UInt32})
                 AND seq > replayed_to
                 AND ({model:String} = '' OR model = {model:String})
                 AND ({name:String} = '' OR loop_name = {name:String}) AS counted
        FROM
        (
            SELECT loop_id, seq, flag_verdict, flag_kind, flag_cost, model, flag_time, replayed_to
            FROM
            (
                SELECT loop_id, seq, verdict AS flag_verdict, kind_class AS flag_kind, cost_pico AS flag_cost,
                       model_name AS model, time AS flag_time
                FROM chain_violations_now
            ) AS flagged
            ANY LEFT JOIN (SELECT loop_id, replayed_to FROM loop_replays) AS forks USING loop_id
        ) AS forked
        ANY LEFT JOIN (SELECT loop_id, loop_name FROM loop_roots FINAL) AS roots USING loop_id
    ) AS judged
) AS sums;
