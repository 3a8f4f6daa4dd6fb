/**
 * The migrations as files: `schema/clickhouse/NNNN_name.sql`, numbered
 * without holes, each a list of statements. What migrate.ts applies and
 * cluster-ddl.ts renders for a cluster.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly checksum: string;
  readonly statements: readonly string[];
}

const FILE = /^(\d{4})_([a-z0-9_]+)\.sql$/;

/** Splits a migration file into statements: `;` at the end of a line ends one. */
export function splitStatements(sql: string): string[] {
  const withoutComments = sql
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('--'))
    .join('\n');
  return withoutComments
    .split(/;\s*(?:\n|$)/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

export async function loadMigrations(dir: string): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.sql')).sort();
  const migrations: Migration[] = [];
  for (const file of files) {
    const match = FILE.exec(file);
    if (!match) throw new Error(`migration file name ${file} is not NNNN_name.sql`);
    const text = await readFile(join(dir, file), 'utf8');
    migrations.push({
      version: Number(match[1]),
      name: match[2] ?? file,
      checksum: createHash('sha256').update(text).digest('hex'),
      statements: splitStatements(text),
    });
  }
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`migrations must be numbered 0001, 0002, … without holes; found ${m.version} at position ${i + 1}`);
  });
  return migrations;
}
