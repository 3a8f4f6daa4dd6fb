/**
 * The provisioned Grafana files (infra/grafana), read for the tests that
 * check them without a Grafana: the dashboard's panels and queries, and the
 * two provisioning files, which are JSON under a `#` comment header (JSON is
 * YAML too, so Grafana reads them as they are).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './services.js';
export const GRAFANA_DIR = join(REPO_ROOT, 'infra', 'grafana');
export const DASHBOARD_FILE = join(GRAFANA_DIR, 'dashboards', 'agentledger.json');
export const DATASOURCE_FILE = join(GRAFANA_DIR, 'provisioning', 'datasources', 'agentledger.yaml');
export const PROVIDER_FILE = join(GRAFANA_DIR, 'provisioning', 'dashboards', 'agentledger.yaml');
/** A file of `#` comment lines (and blank ones) followed by one JSON value. */
export function readCommentedJson(path) {
    const body = readFileSync(path, 'utf8')
        .split('\n')
        .filter((line) => !/^\s*#/.test(line))
        .join('\n');
    return JSON.parse(body);
}
export function readDashboard() {
    return JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8'));
}
/** Every panel, those inside a (collapsed) row's `panels` included; rows too. */
export function allPanels(d) {
    return (d.panels ?? []).flatMap((p) => [p, ...(p.panels ?? [])]);
}
/** Every query of every panel (rows have none). */
export function panelQueries(d) {
    return allPanels(d).flatMap((panel) => (panel.targets ?? []).map((target) => ({ panel, target, label: `panel ${panel.id} "${panel.title}" ${target.refId}`, sql: target.rawSql ?? '' })));
}
//# sourceMappingURL=grafana-dashboard.js.map