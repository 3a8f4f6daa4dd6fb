-- A root's counted spend over committed rollup rows (spend_rollup_root_hour
-- or spend_rollup_hour: both have source, root_loop_id, calls, cost_pico and
-- hour), grouped by source and root by the includer: the page's top roots.
source, root_loop_id, sum(calls) AS calls, sum(cost_pico) AS cost, min(hour) AS first_hour, max(hour) AS last_hour
