-- The rest of the one pass over the loops stored since an hour before the
-- open hours (spend_rollup_groups.sql, spend_rollup_root_groups.sql: their
-- calls, fragments/open_hour_call.sql, collected just before): each loop's
-- replayed_to (its ForkedFrom's at_seq, neither malformed nor a second
-- version; 0 for a loop that is no fork), and the FROM that reads those loops'
-- ModelCalled and ForkedFrom rows of envelopes FINAL, grouped by loop. One
-- pass, as FINAL reads each loop's whole granules, scattered by loop id. The
-- includer declares sources (nothing is read when it lacks 'runtime').
maxIf(fork_at_seq, kind_class = 'ForkedFrom' AND verdict NOT IN ('malformed', 'fork')) AS replayed_to
FROM envelopes FINAL
WHERE kind_class IN ('ModelCalled', 'ForkedFrom')
  AND has({sources:Array(String)}, 'runtime')
  AND loop_id IN (SELECT loop_id FROM envelopes WHERE ingested_at >= (SELECT toDateTime(greatest(toUInt32(toStartOfHour(max(seen_through))), 3600) - 3600) FROM rollup_sweeps))
GROUP BY loop_id
