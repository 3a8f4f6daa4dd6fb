-- Per craze session (view craze_sessions): incarnations, exact spend and
-- tokens as text, unpriced reports, journal facts, models, first/last seen.
SELECT session_id, incarnations, cost_pico, input_tokens, output_tokens, reasoning_tokens,
       cache_read_tokens, cache_creation_tokens, unpriced_reports, models, provider, cwd,
       toString(first_seen) AS first_seen, toString(last_seen) AS last_seen
FROM craze_sessions;
