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
/** The operations dashboard, on the Prometheus data source. */
export const OPERATIONS_FILE = join(GRAFANA_DIR, 'dashboards', 'agentledger-operations.json');
export const PROMETHEUS_DATASOURCE_FILE = join(GRAFANA_DIR, 'provisioning', 'datasources', 'prometheus.yaml');

export interface DataSourceRef {
  readonly type?: string;
  readonly uid?: string;
}
export interface Target {
  readonly refId?: string;
  readonly datasource?: DataSourceRef;
  readonly editorType?: string;
  readonly queryType?: string;
  readonly format?: number;
  readonly rawSql?: string;
  /** PromQL, on the Prometheus data source. */
  readonly expr?: string;
  readonly instant?: boolean;
  readonly range?: boolean;
}
export interface Panel {
  readonly id?: number;
  readonly type?: string;
  readonly title?: string;
  readonly datasource?: DataSourceRef;
  readonly targets?: Target[];
  readonly panels?: Panel[];
  readonly gridPos?: { h: number; w: number; x: number; y: number };
}
export interface Dashboard {
  readonly uid?: string;
  readonly title?: string;
  readonly panels?: Panel[];
  readonly time?: { from: string; to: string };
}

/** A file of `#` comment lines (and blank ones) followed by one JSON value. */
export function readCommentedJson(path: string): unknown {
  const body = readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => !/^\s*#/.test(line))
    .join('\n');
  return JSON.parse(body);
}

export function readDashboard(file = DASHBOARD_FILE): Dashboard {
  return JSON.parse(readFileSync(file, 'utf8')) as Dashboard;
}

/** Every panel, those inside a (collapsed) row's `panels` included; rows too. */
export function allPanels(d: Dashboard): Panel[] {
  return (d.panels ?? []).flatMap((p) => [p, ...(p.panels ?? [])]);
}

export interface PanelQuery {
  readonly panel: Panel;
  readonly target: Target;
  /** `panel <id> "<title>" <refId>`, for messages. */
  readonly label: string;
  readonly sql: string;
}

/** Every query of every panel (rows have none). */
export function panelQueries(d: Dashboard): PanelQuery[] {
  return allPanels(d).flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({ panel, target, label: `panel ${panel.id} "${panel.title}" ${target.refId}`, sql: target.rawSql ?? '' })),
  );
}
