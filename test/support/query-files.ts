/**
 * Every query file of src/, for the tests that walk them all: the files of
 * each folder's `queries/` (src/clickhouse/queries/, src/read/queries/, …;
 * the fragments aside), and each one's text as its own folder's loader gives
 * it (querySql()). A name is one file across all folders (checked here), so
 * a file is found by its name alone.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { queriesIn, type Queries } from '../../src/clickhouse/sql.js';

/** src/, from the compiled dist/test/support/. */
const SRC = fileURLToPath(new URL('../../../src/', import.meta.url));

/** The shared pieces `include(name)` reads (src/clickhouse/queries/fragments/). */
export const FRAGMENTS_DIR = fileURLToPath(new URL('../../../src/clickhouse/queries/fragments/', import.meta.url));

/** Each query file's folder and loader, by file name (`NAME.sql`). */
const FOLDERS = new Map<string, { readonly dir: string; readonly queries: Queries }>();
for (const feature of readdirSync(SRC).sort()) {
  const dir = join(SRC, feature, 'queries');
  if (!existsSync(dir)) continue;
  const queries = queriesIn(pathToFileURL(`${dir}/`));
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.sql'))) {
    const other = FOLDERS.get(file);
    if (other !== undefined) throw new Error(`query file ${file} is in ${other.dir} and ${dir}: a name names one file`);
    FOLDERS.set(file, { dir, queries });
  }
}

/** Every query file's name (`NAME.sql`), sorted. */
export function queryFiles(): string[] {
  return [...FOLDERS.keys()].sort();
}

function folder(file: string): { readonly dir: string; readonly queries: Queries } {
  const found = FOLDERS.get(file);
  if (found === undefined) throw new Error(`no query file ${file} in any src/*/queries/`);
  return found;
}

/** The absolute path of the query file `NAME.sql`. */
export function queryPath(file: string): string {
  return join(folder(file).dir, file);
}

/** The text of `NAME.sql` as its folder's querySql() gives it. */
export function querySql(name: string): string {
  return folder(`${name}.sql`).queries.querySql(name);
}
