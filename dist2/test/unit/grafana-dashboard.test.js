/**
 * The Grafana files (docs/dashboards.md "Grafana"), checked without a Grafana: the
 * dashboard's structure, that every panel reads the provisioned data source,
 * that the data source logs in as the read-only dashboard user with the
 * password from the environment, that the dashboard provider reads the folder
 * docker-compose.yml mounts, and that the macro expander the SQL checks use
 * gives what the plugin gives. The panels' SQL itself runs on ClickHouse
 * 18.16 in test/integration/grafana-dashboard.test.ts and on current
 * ClickHouse in test/modern/check_sql.py.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { expandMacros, MACRO_NAMES } from '../support/grafana-macros.js';
import { allPanels, DATASOURCE_FILE, panelQueries, PROVIDER_FILE, readCommentedJson, readDashboard } from '../support/grafana-dashboard.js';
import { REPO_ROOT } from '../support/services.js';
const PLUGIN = 'grafana-clickhouse-datasource';
const dashboard = readDashboard();
const datasources = readCommentedJson(DATASOURCE_FILE);
const providers = readCommentedJson(PROVIDER_FILE);
const source = datasources.datasources?.[0];
/**
 * The grafana service of docker-compose.yml, read by its indentation (the
 * file is plain block YAML): its image, environment and volume lines.
 */
function composeGrafana() {
    const lines = readFileSync(join(REPO_ROOT, 'docker-compose.yml'), 'utf8').split('\n');
    const start = lines.findIndex((l) => l === '  grafana:');
    assert.ok(start >= 0, 'docker-compose.yml has a grafana service');
    const end = lines.findIndex((l, i) => i > start && /^ {0,2}\S/.test(l) && !l.startsWith('    '));
    const block = lines.slice(start + 1, end < 0 ? undefined : end);
    const section = (name) => {
        const at = block.findIndex((l) => l === `    ${name}:`);
        if (at < 0)
            return [];
        const rest = block.slice(at + 1);
        const stop = rest.findIndex((l) => /^ {4}\S/.test(l));
        return rest.slice(0, stop < 0 ? undefined : stop).filter((l) => l.trim() !== '' && !l.trim().startsWith('#'));
    };
    const unquote = (s) => s.trim().replace(/^"(.*)"$/, '$1');
    const environment = new Map(section('environment').map((l) => {
        const m = /^\s+([A-Z0-9_]+):\s*(.*)$/.exec(l);
        assert.ok(m, `an environment line KEY: value: ${l}`);
        return [m[1], unquote(m[2])];
    }));
    const volumes = section('volumes').map((l) => unquote(l.replace(/^\s+-\s*/, '')));
    const dependsOn = section('depends_on').filter((l) => /^ {6}\S/.test(l)).map((l) => l.trim().replace(/:$/, ''));
    const image = block.find((l) => l.startsWith('    image:'))?.replace(/^\s+image:\s*/, '').replace(/\s+#.*$/, '') ?? '';
    return { image, environment, volumes, dependsOn };
}
test('the dashboard: a uid, a title, a time range, unique panel ids, every panel on the 24-column grid', () => {
    assert.match(dashboard.uid ?? '', /^[A-Za-z0-9_-]{1,40}$/, 'a dashboard uid Grafana accepts');
    assert.notEqual(dashboard.uid, source?.uid, 'the dashboard and the data source have different uids');
    assert.ok(dashboard.title);
    assert.ok(dashboard.time?.from && dashboard.time.to);
    const panels = allPanels(dashboard);
    assert.ok(panels.length > 0);
    const ids = panels.map((p) => p.id);
    assert.ok(ids.every((id) => Number.isInteger(id) && id > 0), `every panel has a positive integer id: ${JSON.stringify(ids)}`);
    assert.equal(new Set(ids).size, ids.length, `panel ids are unique: ${JSON.stringify(ids)}`);
    for (const p of panels) {
        const g = p.gridPos;
        assert.ok(g && g.w > 0 && g.h > 0 && g.x >= 0 && g.x + g.w <= 24 && g.y >= 0, `panel ${p.id} "${p.title}" fits the grid: ${JSON.stringify(g)}`);
    }
});
test('no two panels overlap on the grid', () => {
    const boxes = allPanels(dashboard).map((p) => ({ id: p.id, ...p.gridPos }));
    for (const [i, a] of boxes.entries()) {
        for (const b of boxes.slice(i + 1)) {
            const apart = a.x + a.w <= b.x || b.x + b.w <= a.x || a.y + a.h <= b.y || b.y + b.h <= a.y;
            assert.ok(apart, `panels ${a.id} and ${b.id} overlap`);
        }
    }
});
test('every panel and every query reads the provisioned ClickHouse data source, by its uid', () => {
    assert.equal(source?.type, PLUGIN);
    assert.ok(source.uid);
    const want = { type: PLUGIN, uid: source.uid };
    for (const p of allPanels(dashboard)) {
        if (p.type === 'row') {
            assert.equal(p.targets, undefined, `row ${p.id} has no queries`);
            continue;
        }
        assert.deepEqual(p.datasource, want, `panel ${p.id} "${p.title}"`);
        assert.ok((p.targets ?? []).length > 0, `panel ${p.id} "${p.title}" has a query`);
        const refIds = (p.targets ?? []).map((t) => t.refId);
        assert.equal(new Set(refIds).size, refIds.length, `panel ${p.id}: refIds unique`);
        for (const t of p.targets ?? [])
            assert.deepEqual(t.datasource, want, `panel ${p.id} "${p.title}" target ${t.refId}`);
    }
});
test('every query is SQL the checks can run: non-empty, the SQL editor, table or time-series format, only macros the expander knows', () => {
    const queries = panelQueries(dashboard);
    assert.ok(queries.length >= 10);
    const ctx = { from: 1_764_547_200, to: 1_764_633_599, intervalSeconds: 60 };
    for (const q of queries) {
        assert.ok(q.sql.trim().length > 0, `${q.label}: empty SQL`);
        assert.equal(q.target.editorType, 'sql', q.label);
        // sqlutil's formats: 0 time series (long rows widened per label column), 1 table.
        assert.ok(q.target.format === 0 || q.target.format === 1, `${q.label}: format ${q.target.format}`);
        assert.equal(q.target.queryType, q.target.format === 0 ? 'timeseries' : 'table', q.label);
        if (q.panel.type === 'timeseries')
            assert.equal(q.target.format, 0, `${q.label}: a time-series panel's query is in time-series format`);
        // One statement: the plugin sends the text as one query.
        assert.ok(!/;\s*\S/.test(q.sql), `${q.label}: one statement`);
        const expanded = expandMacros(q.sql, ctx);
        assert.ok(!expanded.includes('$'), `${q.label}: a $ left after expansion (a Grafana variable the checks cannot run): ${expanded}`);
        // What ClickHouse 18.16 lacks, which $__timeInterval, $__timeGroup and the _ms macros expand to (the 18.16 run refuses it too).
        for (const missing of ['toStartOfInterval', 'toDateTime64', 'fromUnixTimestamp64Milli'])
            assert.ok(!expanded.includes(missing), `${q.label}: ${missing} does not exist on ClickHouse 18.16`);
    }
});
test('the expander gives what the plugin gives (test/fixtures/grafana/macros.json)', () => {
    const fixtures = JSON.parse(readFileSync(join(REPO_ROOT, 'test', 'fixtures', 'grafana', 'macros.json'), 'utf8'));
    const ctx = { from: fixtures.from, to: fixtures.to, intervalSeconds: fixtures.intervalSeconds };
    for (const c of fixtures.cases)
        assert.equal(expandMacros(c.sql, ctx), c.want, c.sql);
    for (const c of fixtures.refused)
        assert.throws(() => expandMacros(c.sql, ctx), Error, `${c.sql}: ${c.why}`);
    // Every macro of the table has a case.
    for (const name of MACRO_NAMES)
        assert.ok(fixtures.cases.some((c) => c.sql.includes(`$__${name}`)), `a fixture for $__${name}`);
});
test('money in tables is exact text: a table that reads a cost shows a cost_usd text column, never a Decimal read raw', () => {
    for (const q of panelQueries(dashboard)) {
        if (q.panel.type !== 'table' || !/cost_pico/.test(q.sql))
            continue;
        assert.match(q.sql, /\bAS cost_usd\b/, `${q.label}: an exact cost_usd column`);
        assert.match(q.sql, /^SELECT [^\n]*\bcost_usd\b/m, `${q.label}: cost_usd among the columns shown`);
    }
    const tables = panelQueries(dashboard).filter((q) => q.panel.type === 'table' && /cost_pico/.test(q.sql));
    assert.ok(tables.length >= 3, 'the top models, top roots and unverified spend tables show money');
});
test('the data source: the plugin, as agentledger_dashboard, the password and database from the environment, no settings sent', () => {
    assert.equal(datasources.apiVersion, 1);
    assert.equal(datasources.datasources?.length, 1);
    const uids = (datasources.datasources ?? []).map((d) => d.uid);
    assert.equal(new Set(uids).size, uids.length);
    const json = source?.jsonData ?? {};
    assert.equal(json['username'], 'agentledger_dashboard');
    assert.equal(source?.secureJsonData?.['password'], '${AGENTLEDGER_CLICKHOUSE_DASHBOARD_PASSWORD}');
    assert.equal(json['defaultDatabase'], '${AGENTLEDGER_CLICKHOUSE_DATABASE}');
    assert.equal(json['password'], undefined, 'no password in jsonData (stored in clear)');
    // readonly=1 refuses any setting a query carries: the plugin sends customSettings and the row limit as settings.
    assert.equal(json['customSettings'], undefined);
    assert.notEqual(json['enableRowLimit'], true);
    assert.equal(json['protocol'], 'native');
    assert.equal(json['port'], 9000);
    const users = readFileSync(join(REPO_ROOT, 'infra', 'clickhouse', 'users.d', 'agentledger.xml'), 'utf8');
    assert.match(users, /<agentledger_dashboard>\s*<readonly>1<\/readonly>\s*<\/agentledger_dashboard>/, 'the dashboard profile is readonly=1');
    assert.match(users, /<agentledger_dashboard>\s*<password from_env="AGENTLEDGER_CLICKHOUSE_DASHBOARD_PASSWORD"\/>/, 'the same variable is that user\'s password');
});
test('the compose ClickHouse lets the dashboard user set max_execution_time, which the plugin sends with each query, above the data source\'s timeout', () => {
    const compose = readFileSync(join(REPO_ROOT, 'docker-compose.yml'), 'utf8');
    assert.match(compose, /^\s+- \.\/infra\/clickhouse\/docker-dashboard-settings\.xml:\/etc\/clickhouse-server\/users\.d\/docker-dashboard-settings\.xml:ro$/m, 'mounted into the compose ClickHouse\'s users.d');
    const xml = readFileSync(join(REPO_ROOT, 'infra', 'clickhouse', 'docker-dashboard-settings.xml'), 'utf8').replace(/<!--[\s\S]*?-->/g, '');
    const m = /<profiles>\s*<agentledger_dashboard>\s*<constraints>\s*<max_execution_time>\s*<max>(\d+)<\/max>\s*<changeable_in_readonly\/>\s*<\/max_execution_time>\s*<\/constraints>\s*<\/agentledger_dashboard>\s*<\/profiles>/.exec(xml);
    assert.ok(m, 'the dashboard profile: max_execution_time changeable in readonly, bounded, and nothing else');
    // clickhouse-go sends the query's deadline plus a few seconds.
    assert.ok(Number(m[1]) >= Number(source?.jsonData?.['queryTimeout']) + 10, `max ${m[1]} leaves room above the query timeout`);
});
test('docker-compose.yml: Grafana with the plugin, the variables the data source reads, the mounts the provisioning files name', () => {
    const g = composeGrafana();
    assert.match(g.image, /^grafana\/grafana:\d+\.\d+\.\d+$/, 'a pinned Grafana image');
    assert.match(g.environment.get('GF_INSTALL_PLUGINS') ?? '', new RegExp(`(^|,)${PLUGIN} \\d+\\.\\d+\\.\\d+(,|$)`), 'the plugin, pinned');
    // Every ${VAR} of the data source file is in the container's environment.
    const vars = [...readFileSync(DATASOURCE_FILE, 'utf8').split('\n').filter((l) => !l.trim().startsWith('#')).join('\n').matchAll(/\$\{([A-Z0-9_]+)\}/g)].map((m) => m[1]);
    assert.ok(vars.length >= 2);
    for (const v of vars)
        assert.match(g.environment.get(v) ?? '', new RegExp(`^\\$\\{${v}(:-[^}]*)?\\}$`), `${v} passed through from the compose environment`);
    // The host is the compose service, which Grafana waits for.
    assert.equal(source?.jsonData?.['host'], 'clickhouse');
    assert.ok(g.dependsOn.includes('clickhouse'));
    const mounts = new Map(g.volumes.filter((v) => v.startsWith('./')).map((v) => {
        const [from, to, mode] = v.split(':');
        assert.equal(mode, 'ro', `${v}: read-only`);
        return [to, from];
    }));
    for (const [to, from] of mounts)
        assert.ok(existsSync(join(REPO_ROOT, from)), `${from} (mounted at ${to}) exists`);
    assert.equal(mounts.get('/etc/grafana/provisioning/datasources'), './infra/grafana/provisioning/datasources');
    assert.equal(mounts.get('/etc/grafana/provisioning/dashboards'), './infra/grafana/provisioning/dashboards');
    assert.equal(providers.apiVersion, 1);
    const provider = providers.providers?.[0];
    assert.equal(provider?.type, 'file');
    const path = provider.options?.path ?? '';
    assert.equal(mounts.get(path), './infra/grafana/dashboards', `the provider path ${path} is where the dashboards folder is mounted`);
    assert.ok(existsSync(join(REPO_ROOT, 'infra', 'grafana', 'dashboards', 'agentledger.json')));
    const home = g.environment.get('GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH');
    if (home !== undefined)
        assert.equal(home, `${path}/agentledger.json`, 'the home dashboard is the provisioned file');
});
//# sourceMappingURL=grafana-dashboard.test.js.map