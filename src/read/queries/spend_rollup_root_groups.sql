-- Counted spend per source and root from the hour rollups, with the open
-- hours live as spend_hourly_now (0015) computes them: what `spend --rollups
-- --by root` prints, one row per root. The open hours are those from the one
-- holding the last finished sweep's newest ingest stamp on (every hour when
-- no sweep has finished); earlier hours are the committed rollups:
-- - runtime: spend_rollup_root_hourly (per hour, source and root);
-- - craze: spend_rollup_committed, whose per-session rows (a session is its
--   own root) keep the unpriced reports spend_rollup_root_hour does not.
-- The live runtime half is spend_hourly_now's, with the root in place of the
-- name (loop_roots; a loop it does not hold yet is its own root until the
-- next sweep places it): verified ModelCalled links of envelopes FINAL of the
-- loops stored since an hour before the open hours, a fork's replays left
-- to its source, read in one pass (the view reads those granules twice).
-- Spelled out here, not read from a view, so the window
-- reaches every branch on 18.16 (which pushes no predicate into a view).
-- Every hour the window [since, until) (Unix seconds) overlaps is counted
-- whole, as in spend_rollup_groups.sql. Sums are Decimal128, rendered as
-- text in two pieces (hi, lo) because 18.16's toString garbles 21 digits and
-- more (migrations 0012 and 0017 say how).
-- param: since UInt32 0
-- param: until UInt32 4102444800
-- param: sources Array(String) ['runtime', 'craze']
SELECT source, root_loop_id, calls,
       decimal_text(input_total) AS input_tokens_sum,
       decimal_text(output_total) AS output_tokens_sum,
       decimal_text(cost_total) AS cost,
       unpriced_calls
FROM
(
    SELECT source, root_loop_id,
           include(spend_group_sums)
    FROM
    (
        SELECT source, root_loop_id, calls_sum, input_tokens_sum, output_tokens_sum, cost_pico_sum, toUInt64(0) AS unpriced_calls_sum
        FROM spend_rollup_root_hourly
        WHERE source = 'runtime' AND has({sources:Array(String)}, 'runtime')
          AND hour < (SELECT toStartOfHour(max(seen_through)) FROM rollup_sweeps)
          AND hour >= toStartOfHour(toDateTime({since:UInt32})) AND hour < toDateTime({until:UInt32})
        UNION ALL
        SELECT source, root_loop_id, calls AS calls_sum, input_tokens AS input_tokens_sum, output_tokens AS output_tokens_sum, cost_pico AS cost_pico_sum, unpriced_calls AS unpriced_calls_sum
        FROM spend_rollup_committed
        WHERE source = 'craze' AND has({sources:Array(String)}, 'craze')
          AND hour < (SELECT toStartOfHour(max(seen_through)) FROM rollup_sweeps)
          AND hour >= toStartOfHour(toDateTime({since:UInt32})) AND hour < toDateTime({until:UInt32})
        UNION ALL
        SELECT 'runtime' AS source, if(rolled_root = '', loop_id, rolled_root) AS root_loop_id,
               n AS calls_sum, input_sum AS input_tokens_sum, output_sum AS output_tokens_sum, cost_sum AS cost_pico_sum, toUInt64(0) AS unpriced_calls_sum
        FROM
        (
            SELECT loop_id, count() AS n,
                   sum(toDecimal128(call.3, 0)) AS input_sum, sum(toDecimal128(call.4, 0)) AS output_sum, sum(toDecimal128(call.5, 0)) AS cost_sum
            FROM
            (
                -- One pass over the loops' rows for their calls and their ForkedFrom (two reads of the
                -- same granules otherwise: FINAL reads each loop's whole granules, scattered by loop id).
                SELECT loop_id,
                       groupArrayIf((seq, toStartOfHour(time), input_tokens, output_tokens, cost_pico),
                                    include(open_hour_call)) AS calls,
                       include(open_hour_loops)
            ) AS loops
            ARRAY JOIN calls AS call
            WHERE call.1 > replayed_to AND include(open_hour_window)
            GROUP BY loop_id
        ) AS counted
        ANY LEFT JOIN (SELECT loop_id, root_loop_id AS rolled_root FROM loop_roots FINAL) AS roots USING loop_id
        UNION ALL
        SELECT 'craze' AS source, session_id AS root_loop_id,
               count() AS calls_sum, sum(toDecimal128(input_tokens, 0)) AS input_tokens_sum, sum(toDecimal128(output_tokens, 0)) AS output_tokens_sum,
               sum(toDecimal128(cost_pico, 0)) AS cost_pico_sum, countIf(unpriced = 1) AS unpriced_calls_sum
        FROM craze_spend
        WHERE has({sources:Array(String)}, 'craze')
          AND at >= (SELECT toStartOfHour(max(seen_through)) FROM rollup_sweeps)
          AND at >= toStartOfHour(toDateTime({since:UInt32})) AND toStartOfHour(at) < toDateTime({until:UInt32})
        GROUP BY session_id
    )
    GROUP BY source, root_loop_id
) AS spend
ORDER BY source, root_loop_id;
