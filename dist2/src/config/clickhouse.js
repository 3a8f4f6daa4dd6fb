/** ClickHouse: where agentledger's tables are, who writes them, and who migrates them. */
import { z } from 'zod';
import { httpUrlLike, readableFile, secret, service, setting, userName } from './setting.js';
/** The local stack's migrator (infra/clickhouse/users.d/agentledger.xml), used when no ClickHouse user is set at all. */
const STACK_MIGRATOR = { user: 'agentledger_migrator', password: 'agentledger_migrator' };
const vars = {
    AGENTLEDGER_CLICKHOUSE_URL: setting(httpUrlLike('http://127.0.0.1:8123').default('http://127.0.0.1:8123'), `ClickHouse HTTP endpoint; \`https://…\` for TLS. A user and password in it win
     over \`AGENTLEDGER_CLICKHOUSE_USER\` and \`AGENTLEDGER_CLICKHOUSE_PASSWORD\`
     (printed as \`***\`).`, { show: 'url' }),
    AGENTLEDGER_CLICKHOUSE_CA_FILE: setting(readableFile.optional(), 'PEM file of a private CA that signed ClickHouse\'s certificate; needs an `https://` `AGENTLEDGER_CLICKHOUSE_URL`.', { unset: 'the system CAs' }),
    AGENTLEDGER_CLICKHOUSE_USER: setting(userName.default('agentledger'), 'ClickHouse user agentledger writes and reads as (no DDL rights on the local stack).'),
    AGENTLEDGER_CLICKHOUSE_PASSWORD: secret(z.string().default('agentledger'), 'ClickHouse password; the default is the local stack\'s. Never printed.'),
    AGENTLEDGER_CLICKHOUSE_DATABASE: setting(z
        .string()
        .regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'expected a database name (letters, digits, _)')
        .default('agentledger'), 'ClickHouse database holding agentledger\'s tables.'),
    AGENTLEDGER_CLICKHOUSE_CLUSTER: setting(z
        .string()
        .regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'expected a cluster name of remote_servers (letters, digits, _)')
        .optional(), `ClickHouse cluster (a name in the servers' \`remote_servers\`, see
     \`system.clusters\`) the schema spans: \`migrate\` then creates each table as
     a \`Replicated*MergeTree\` \`<table>_local\` on every server plus a
     \`Distributed\` \`<table>\` over it, all \`ON CLUSTER\` (docs/architecture.md
     "One schema, two engines"). Set it before the first \`migrate\`: a database
     migrated without it stays single-node.`, { unset: 'one server: plain MergeTree tables' }),
    AGENTLEDGER_CLICKHOUSE_MIGRATOR_USER: setting(userName.optional(), `ClickHouse user for schema changes: the \`migrate\` command, and \`ingest\`'s
     migrate at start unless \`--no-migrate\` (docs/operations.md "Users and passwords"). Unset:
     the main user (\`AGENTLEDGER_CLICKHOUSE_USER\`), which then needs DDL rights;
     when that is unset too, the local stack's \`agentledger_migrator\`.`, { unset: 'the main user if set, else the stack\'s `agentledger_migrator`' }),
    AGENTLEDGER_CLICKHOUSE_MIGRATOR_PASSWORD: secret(z.string().optional(), `Password of \`AGENTLEDGER_CLICKHOUSE_MIGRATOR_USER\`, only used with it; the
     local stack's is \`agentledger_migrator\`. Never printed.`, { unset: 'empty; `agentledger_migrator` with the stack\'s migrator' }),
};
export const clickhouse = service({
    title: 'ClickHouse',
    vars,
    config: (e, raw) => ({
        clickhouse: {
            url: e.AGENTLEDGER_CLICKHOUSE_URL,
            user: e.AGENTLEDGER_CLICKHOUSE_USER,
            password: e.AGENTLEDGER_CLICKHOUSE_PASSWORD,
            database: e.AGENTLEDGER_CLICKHOUSE_DATABASE,
            /** The cluster the schema spans (ON CLUSTER, replicated and Distributed tables); undefined: one server. */
            cluster: e.AGENTLEDGER_CLICKHOUSE_CLUSTER,
            /** PEM file of a private CA for an https:// URL. */
            caFile: e.AGENTLEDGER_CLICKHOUSE_CA_FILE,
            /** Who runs migrations: AGENTLEDGER_CLICKHOUSE_MIGRATOR_USER, else the main user (see migratorSettings()). */
            migrator: e.AGENTLEDGER_CLICKHOUSE_MIGRATOR_USER
                ? { user: e.AGENTLEDGER_CLICKHOUSE_MIGRATOR_USER, password: e.AGENTLEDGER_CLICKHOUSE_MIGRATOR_PASSWORD ?? '' }
                : raw['AGENTLEDGER_CLICKHOUSE_USER'] === undefined
                    ? // Every default points at the local stack, this one too: its writer has no DDL, its migrator does.
                        STACK_MIGRATOR
                    : { user: e.AGENTLEDGER_CLICKHOUSE_USER, password: e.AGENTLEDGER_CLICKHOUSE_PASSWORD },
        },
    }),
    problems: (e) => [...caProblems(e), ...migratorProblems(e)],
    redacts: {
        'clickhouse.url': ['AGENTLEDGER_CLICKHOUSE_URL'],
        'clickhouse.password': ['AGENTLEDGER_CLICKHOUSE_PASSWORD'],
        'clickhouse.migrator.password': ['AGENTLEDGER_CLICKHOUSE_MIGRATOR_PASSWORD', 'AGENTLEDGER_CLICKHOUSE_PASSWORD'],
    },
});
/** A CA file for a plain http:// URL would silently go unused. */
function caProblems(e) {
    return e.AGENTLEDGER_CLICKHOUSE_CA_FILE !== undefined && !e.AGENTLEDGER_CLICKHOUSE_URL.startsWith('https://')
        ? ['invalid setting AGENTLEDGER_CLICKHOUSE_CA_FILE: only used over HTTPS; give AGENTLEDGER_CLICKHOUSE_URL as https://… or unset it']
        : [];
}
/** A migrator password with no migrator user would silently go unused: most likely the user was forgotten. */
function migratorProblems(e) {
    return e.AGENTLEDGER_CLICKHOUSE_MIGRATOR_PASSWORD !== undefined && e.AGENTLEDGER_CLICKHOUSE_MIGRATOR_USER === undefined
        ? ['missing setting AGENTLEDGER_CLICKHOUSE_MIGRATOR_USER: AGENTLEDGER_CLICKHOUSE_MIGRATOR_PASSWORD is only used with it']
        : [];
}
/** The ClickHouse settings to migrate with: the main ones, as the migrator user. */
export function migratorSettings(settings) {
    return { ...settings, user: settings.migrator.user, password: settings.migrator.password };
}
//# sourceMappingURL=clickhouse.js.map