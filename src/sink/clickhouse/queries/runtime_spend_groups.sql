-- Counted model spend of the loop runtime (verified, not replayed), per loop,
-- provider, model and UTC day, in [since, until) (Unix seconds). The caller
-- folds loops into names or roots.
-- param: since UInt32 0
-- param: until UInt32 4102444800
SELECT loop_id, provider, model, toString(toDate(time)) AS day, count() AS calls,
       toString(sum(toDecimal128(input_tokens, 0))) AS input_tokens_sum,
       toString(sum(toDecimal128(output_tokens, 0))) AS output_tokens_sum,
       toString(sum(toDecimal128(cost_pico, 0))) AS cost
FROM runtime_spend
WHERE kind_class = 'ModelCalled' AND verified AND NOT replayed
  AND time >= toDateTime({since:UInt32}) AND time < toDateTime({until:UInt32})
GROUP BY loop_id, provider, model, day
ORDER BY loop_id, provider, model, day;
