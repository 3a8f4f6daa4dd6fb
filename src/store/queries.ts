/** The writers' own reads of what they stored: the `.sql` files of src/store/queries/. */
import { queriesIn } from '../clickhouse/sql.js';

export const { querySql, queryRows } = queriesIn(new URL('../../../src/store/queries/', import.meta.url));
