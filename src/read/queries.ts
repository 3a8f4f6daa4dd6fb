/** The reads the CLI's commands ask (chain, sessions, spend, loops): the `.sql` files of src/read/queries/. */
import { queriesIn } from '../clickhouse/sql.js';

export const { querySql, queryRows } = queriesIn(new URL('../../../src/read/queries/', import.meta.url));
