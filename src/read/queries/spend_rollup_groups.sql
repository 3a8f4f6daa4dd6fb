-- Counted spend from the hour rollups with the open hours live, the rows of
-- view spend_hourly_now (migration 0015), grouped here by the `by` key of
-- `spend --rollups` (model: provider and model; day: the UTC day; name: the
-- loop name; source: nothing more) and the source, so the answer is one row
-- per output row whatever the size (the columns not in the key are '').
-- The open hours are those from the one holding the last finished sweep's
-- newest ingest stamp on (every hour when no sweep has finished); earlier
-- hours are the committed rollups (spend_rollup_model_hourly). The live
-- runtime half is spend_hourly_now's (verified ModelCalled links of
-- envelopes FINAL of the loops stored since an hour before the open hours, a
-- fork's replays left to its source, the name from loop_roots), read in one
-- pass: the view reads those loops' granules twice, for the calls and for
-- the ForkedFrom, and FINAL reads each loop's whole granules, scattered by
-- loop id. Spelled out here, not read from the view, for that and so the
-- window reaches every branch on 18.16 (which pushes no predicate into a
-- view). Every hour the window [since, until) (Unix seconds) overlaps is
-- counted whole: since is rounded down to its hour, an hour that starts
-- before until is in. A row stored after the last sweep with a time in a
-- closed hour waits for the next sweep. Sums are Decimal128, rendered as
-- text in two pieces (hi, lo) because 18.16's toString garbles 21 digits and
-- more (migrations 0012 and 0017 say how). --by root:
-- spend_rollup_root_groups.sql.
-- param: since UInt32 0
-- param: until UInt32 4102444800
-- param: by String 'model'
-- param: sources Array(String) ['runtime', 'craze']
SELECT source, key_provider AS provider, key_model AS model, key_day AS day, key_name AS loop_name, calls,
       decimal_text(input_total) AS input_tokens_sum,
       decimal_text(output_total) AS output_tokens_sum,
       decimal_text(cost_total) AS cost,
       unpriced_calls
FROM
(
    SELECT source,
           if({by:String} = 'model', provider, '') AS key_provider,
           if({by:String} = 'model', model, '') AS key_model,
           if({by:String} = 'day', toString(toDate(hour)), '') AS key_day,
           if({by:String} = 'name', loop_name, '') AS key_name,
           include(spend_group_sums)
    FROM
    (
        SELECT hour, source, provider, model, loop_name, calls_sum, input_tokens_sum, output_tokens_sum, cost_pico_sum, unpriced_calls_sum
        FROM spend_rollup_model_hourly
        WHERE has({sources:Array(String)}, source)
          AND hour < (SELECT toStartOfHour(max(seen_through)) FROM rollup_sweeps)
          AND hour >= toStartOfHour(toDateTime({since:UInt32})) AND hour < toDateTime({until:UInt32})
        UNION ALL
        SELECT bucket AS hour, 'runtime' AS source, provider, model, rolled_name AS loop_name,
               n AS calls_sum, input_sum AS input_tokens_sum, output_sum AS output_tokens_sum, cost_sum AS cost_pico_sum, toUInt64(0) AS unpriced_calls_sum
        FROM
        (
            SELECT bucket, provider, model, rolled_name,
                   count() AS n, sum(toDecimal128(input_tokens, 0)) AS input_sum, sum(toDecimal128(output_tokens, 0)) AS output_sum, sum(toDecimal128(cost_pico, 0)) AS cost_sum
            FROM
            (
                SELECT loop_id, call.2 AS bucket, call.3 AS provider, call.4 AS model, call.5 AS input_tokens, call.6 AS output_tokens, call.7 AS cost_pico
                FROM
                (
                    SELECT loop_id,
                           groupArrayIf((seq, toStartOfHour(time), model_provider, model_name, input_tokens, output_tokens, cost_pico),
                                        include(open_hour_call)) AS calls,
                           include(open_hour_loops)
                ) AS loops
                ARRAY JOIN calls AS call
                WHERE call.1 > replayed_to AND include(open_hour_window)
            ) AS counted
            ANY LEFT JOIN (SELECT loop_id, loop_name AS rolled_name FROM loop_roots FINAL) AS roots USING loop_id
            GROUP BY bucket, provider, model, rolled_name
        )
        UNION ALL
        SELECT bucket AS hour, 'craze' AS source, provider, model, '' AS loop_name,
               n AS calls_sum, input_sum AS input_tokens_sum, output_sum AS output_tokens_sum, cost_sum AS cost_pico_sum, unpriced_n AS unpriced_calls_sum
        FROM
        (
            SELECT bucket, provider, model,
                   count() AS n, sum(toDecimal128(input_tokens, 0)) AS input_sum, sum(toDecimal128(output_tokens, 0)) AS output_sum, sum(toDecimal128(cost_pico, 0)) AS cost_sum,
                   countIf(unpriced = 1) AS unpriced_n
            FROM
            (
                SELECT session_id, toStartOfHour(at) AS bucket, model, input_tokens, output_tokens, cost_pico, unpriced
                FROM craze_spend
                WHERE has({sources:Array(String)}, 'craze')
                  AND at >= (SELECT toStartOfHour(max(seen_through)) FROM rollup_sweeps)
                  AND at >= toStartOfHour(toDateTime({since:UInt32})) AND toStartOfHour(at) < toDateTime({until:UInt32})
            ) AS reports
            ANY LEFT JOIN (SELECT session_id, provider FROM craze_sessions) AS sessions USING session_id
            GROUP BY bucket, provider, model
        )
    )
    GROUP BY source, key_provider, key_model, key_day, key_name
) AS spend
ORDER BY source, key_provider, key_model, key_day, key_name;
