-- Counted craze spend (view craze_spend: usage reports that count), per
-- session, provider (the journal's), model and UTC day, in [since, until)
-- (Unix seconds), with the unpriced reports (their cost is a floor). Sums are
-- Decimal128, rendered as text in two pieces (hi, lo) because 18.16's
-- toString garbles 21 digits and more (migrations 0012 and 0017 say how).
-- param: since UInt32 0
-- param: until UInt32 4102444800
SELECT session_id, provider, model, day, calls,
       decimal_text(input_total) AS input_tokens_sum,
       decimal_text(output_total) AS output_tokens_sum,
       decimal_text(cost_total) AS cost,
       unpriced_calls
FROM
(
    SELECT session_id, model, toString(toDate(at)) AS day, count() AS calls,
           sum(toDecimal128(input_tokens, 0)) AS input_total,
           sum(toDecimal128(output_tokens, 0)) AS output_total,
           sum(toDecimal128(cost_pico, 0)) AS cost_total,
           countIf(unpriced = 1) AS unpriced_calls
    FROM craze_spend
    WHERE at >= toDateTime({since:UInt32}) AND at < toDateTime({until:UInt32})
    GROUP BY session_id, model, day
) AS spend
ANY LEFT JOIN (SELECT session_id, provider FROM craze_sessions) AS sessions USING session_id
ORDER BY session_id, provider, model, day;
