-- Counted craze spend (view craze_spend: usage reports that count), per
-- session, provider (the journal's), model and UTC day, in [since, until)
-- (Unix seconds), with the unpriced reports (their cost is a floor).
-- param: since UInt32 0
-- param: until UInt32 4102444800
SELECT session_id, provider, model, day, calls, input_tokens_sum, output_tokens_sum, cost, unpriced_calls
FROM
(
    SELECT session_id, model, toString(toDate(at)) AS day, count() AS calls,
           toString(sum(toDecimal128(input_tokens, 0))) AS input_tokens_sum,
           toString(sum(toDecimal128(output_tokens, 0))) AS output_tokens_sum,
           toString(sum(toDecimal128(cost_pico, 0))) AS cost,
           countIf(unpriced = 1) AS unpriced_calls
    FROM craze_spend
    WHERE at >= toDateTime({since:UInt32}) AND at < toDateTime({until:UInt32})
    GROUP BY session_id, model, day
) AS spend
ANY LEFT JOIN (SELECT session_id, provider FROM craze_sessions) AS sessions USING session_id
ORDER BY session_id, provider, model, day;
