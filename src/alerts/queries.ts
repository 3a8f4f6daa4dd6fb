/** The alert sweep's reads and writes, and `alerts`' list: the `.sql` files of src/alerts/queries/. */
import { queriesIn } from '../clickhouse/sql.js';

export const { querySql, queryRows } = queriesIn(new URL('../../../src/alerts/queries/', import.meta.url));
