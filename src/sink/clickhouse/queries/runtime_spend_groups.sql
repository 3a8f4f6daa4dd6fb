-- Counted model spend of the loop runtime (verified, not replayed), per loop,
-- provider, model and UTC day, in [since, until) (Unix seconds). The caller
-- folds loops into names or roots. Sums are Decimal128, rendered as text in
-- two pieces (hi, lo) because 18.16's toString garbles 21 digits and more
-- (migrations 0012 and 0017 say how).
-- param: since UInt32 0
-- param: until UInt32 4102444800
WITH toDecimal128('1000000000000000000', 0) AS e18
SELECT loop_id, provider, model, day, calls,
       if(abs(input_total) < e18, toString(input_total - intDiv(input_total, e18) * e18),
          concat(toString(intDiv(input_total, e18)), substring(toString(abs(input_total - intDiv(input_total, e18) * e18) + e18), 2))) AS input_tokens_sum,
       if(abs(output_total) < e18, toString(output_total - intDiv(output_total, e18) * e18),
          concat(toString(intDiv(output_total, e18)), substring(toString(abs(output_total - intDiv(output_total, e18) * e18) + e18), 2))) AS output_tokens_sum,
       if(abs(cost_total) < e18, toString(cost_total - intDiv(cost_total, e18) * e18),
          concat(toString(intDiv(cost_total, e18)), substring(toString(abs(cost_total - intDiv(cost_total, e18) * e18) + e18), 2))) AS cost
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
