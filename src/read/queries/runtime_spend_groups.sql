-- Counted model spend of the loop runtime (verified, not replayed), per loop,
-- provider, model and UTC day, in [since, until) (Unix seconds). The caller
-- folds loops into names or roots. Sums are Decimal128, rendered as text in
-- two pieces (hi, lo) because 18.16's toString garbles 21 digits and more
-- (migrations 0012 and 0017 say how).
-- param: since UInt32 0
-- param: until UInt32 4102444800
SELECT loop_id, provider, model, day, calls,
       decimal_text(input_total) AS input_tokens_sum,
       decimal_text(output_total) AS output_tokens_sum,
       decimal_text(cost_total) AS cost
FROM
(
    SELECT loop_id, provider, model, toString(toDate(time)) AS day, count() AS calls,
           sum(toDecimal128(input_tokens, 0)) AS input_total,
           sum(toDecimal128(output_tokens, 0)) AS output_total,
           sum(toDecimal128(cost_pico, 0)) AS cost_total
    FROM runtime_spend
    WHERE kind_class = 'ModelCalled' AND verified AND NOT replayed
      AND time >= toDateTime({since:UInt32}) AND time < toDateTime({until:UInt32})
    GROUP BY loop_id, provider, model, day
) AS spend
ORDER BY loop_id, provider, model, day;
