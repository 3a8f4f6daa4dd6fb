/** The reads behind the page's endpoints (page-reads.ts): the `.sql` files of src/serve/queries/. */
import { queriesIn } from '../clickhouse/sql.js';

export const { querySql, queryRows } = queriesIn(new URL('../../../src/serve/queries/', import.meta.url));
