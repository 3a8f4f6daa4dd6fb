import { fileURLToPath } from 'node:url';
import { migratorSettings } from '../config/index.js';
import { migrate } from '../migrate/migrate.js';
import type { Command } from './command.js';
import { parseOptions } from './command.js';

/** The project's schema/clickhouse, found from the compiled file (dist/src/cli/). */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../../schema/clickhouse/', import.meta.url));

export const migrateCommand: Command = {
  name: 'migrate',
  summary: 'create the ClickHouse database and apply pending migrations',
  help: `Usage: agentledger migrate [--dir DIR]

Creates AGENTLEDGER_CLICKHOUSE_DATABASE if needed and applies, in order, every
migration in schema/clickhouse/ not yet recorded in its schema_migrations
table. Each file is applied exactly once; running migrate twice, or from two
processes at once, is safe. A migration edited after it was applied is refused.
Runs as AGENTLEDGER_CLICKHOUSE_MIGRATOR_USER / _PASSWORD when set (the user with
DDL rights), else as AGENTLEDGER_CLICKHOUSE_USER.

Options:
  --dir DIR   folder of NNNN_name.sql files (default: the project's schema/clickhouse)`,
  async run(args, { config, log, out }) {
    const { values } = parseOptions(args, { dir: { type: 'string' } });
    const dir = values.dir ?? MIGRATIONS_DIR;
    const result = await migrate(migratorSettings(config.clickhouse), dir, log);
    out(
      `migrations: ${result.applied.length} applied, ${result.alreadyApplied} already applied (database ${config.clickhouse.database})`,
    );
    return 0;
  },
};
