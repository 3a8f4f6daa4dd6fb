/**
 * The rollup sweep's queries (hour rollups, loop summaries, chain flags,
 * prunes) and the reads of the stored loops it folds (loop-reads.ts): the
 * `.sql` files of src/rollups/queries/.
 */
import { queriesIn } from '../clickhouse/sql.js';

export const { querySql, queryRows } = queriesIn(new URL('../../../src/rollups/queries/', import.meta.url));
