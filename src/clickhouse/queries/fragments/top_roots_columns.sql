-- The columns of a top-roots row for the page (page_top_roots.sql,
-- page_top_roots_filtered.sql), from their ranked sums (root_sums.sql) and
-- the roots' names: counts and hours as text, the cost in exact text.
source, root_loop_id, loop_name, toString(calls) AS calls_text, decimal_text(cost) AS cost_text,
toString(first_hour) AS first_hour_text, toString(last_hour) AS last_hour_text
