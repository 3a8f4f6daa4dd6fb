-- Per craze session: incarnations, spend (exact: Int64 picodollars summed as
-- Decimal128 and read as text), tokens, unpriced reports, what the journal
-- said about it, first and last seen. Only counted usage reports (report = 1:
-- session-level, not replayed, in order) carry spend.
SELECT
    session_id,
    uniqExact(incarnation) AS incarnations,
    toString(sumIf(toDecimal128(cost_pico, 0), report = 1)) AS cost_pico,
    toString(sumIf(toDecimal128(input_tokens, 0), report = 1)) AS input_tokens,
    toString(sumIf(toDecimal128(output_tokens, 0), report = 1)) AS output_tokens,
    toString(sumIf(toDecimal128(reasoning_tokens, 0), report = 1)) AS reasoning_tokens,
    toString(sumIf(toDecimal128(cache_read_tokens, 0), report = 1)) AS cache_read_tokens,
    toString(sumIf(toDecimal128(cache_creation_tokens, 0), report = 1)) AS cache_creation_tokens,
    countIf(report = 1 AND unpriced = 1) AS unpriced_reports,
    groupUniqArrayIf(model, model != '') AS models,
    anyIf(provider, provider != '') AS provider,
    anyIf(cwd, cwd != '') AS cwd,
    toString(min(at)) AS first_seen,
    toString(max(at)) AS last_seen
FROM craze_events FINAL
WHERE verdict != 'malformed'
GROUP BY session_id;
