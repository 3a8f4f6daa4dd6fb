/**
 * Every setting agentledger reads, parsed once at boot. Each service declares
 * its variables once (kafka.ts, clickhouse.ts, redis.ts, worker.ts, alerts.ts,
 * ingest.ts, observability.ts, serve.ts: a zod schema, a description, how it
 * may be shown) with its mapping into the grouped Config; this module puts
 * them together. Nothing else in the code base reads `process.env`: a
 * component gets the parsed, typed value it needs from the composition root.
 *
 * Defaults point at the local stack (`infra/stack.sh up`) and at
 * `docker-compose.yml`, which use the same ports and credentials. The table
 * in docs/configuration.md is generated from these declarations
 * (settings-table.ts).
 */
import { existsSync } from 'node:fs';
import { z } from 'zod';
import { alerts } from './alerts.js';
import { clickhouse } from './clickhouse.js';
import { ingest } from './ingest.js';
import { kafka } from './kafka.js';
import { observability } from './observability.js';
import { leafShow, redactLeaves, shownValue } from './redact.js';
import { redis } from './redis.js';
import { serve } from './serve.js';
import { shapeOf, type Setting, type Show } from './setting.js';
import { worker } from './worker.js';

export { migratorSettings } from './clickhouse.js';
export { redisUrlWithPassword } from './redis.js';
export { redactUrl, redactWebhookUrl } from './redact.js';

/** The services in the order of docs/configuration.md, of the error lines and of `agentledger config`. */
export const services = [kafka, clickhouse, redis, worker, alerts, ingest, observability, serve] as const;

/** Every variable, its default and its description (the schemas' `.shape` is the list of variables). */
export const envSchema = z.object({
  ...shapeOf(kafka.vars),
  ...shapeOf(clickhouse.vars),
  ...shapeOf(redis.vars),
  ...shapeOf(worker.vars),
  ...shapeOf(alerts.vars),
  ...shapeOf(ingest.vars),
  ...shapeOf(observability.vars),
  ...shapeOf(serve.vars),
});

export type Env = z.infer<typeof envSchema>;

/** Every variable's declaration, by name. */
export const settings: Readonly<Record<string, Setting>> = Object.fromEntries(services.flatMap((s) => Object.entries(s.vars)));

function compose(e: Env, raw: NodeJS.ProcessEnv) {
  return {
    ...kafka.config(e, raw),
    ...clickhouse.config(e, raw),
    ...redis.config(e, raw),
    ...worker.config(e, raw),
    ...alerts.config(e, raw),
    ...ingest.config(e, raw),
    ...observability.config(e, raw),
    ...serve.config(e, raw),
  };
}

type DeepReadonly<T> = T extends readonly (infer U)[]
  ? readonly DeepReadonly<U>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;

/** The parsed configuration, grouped by the component that uses it: what the services' mappings return. */
export type Config = DeepReadonly<ReturnType<typeof compose>>;
export type AlertsConfig = Config['alerts'];
/** Thresholds of the alert rules (src/alerts/rules.ts reads them as AlertRuleConfig). */
export type AlertRuleSettings = Config['alerts']['rules'];
/** Where notifications go (src/alerts/webhook.ts reads it as Webhook). */
export type WebhookSettings = NonNullable<Config['alerts']['webhook']>;

/** A setting that failed validation; `message` is the one line shown to the user. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: readonly string[]) {
    super(problems.join('\n'));
  }
}

/**
 * Parses the environment. Unset and empty variables take their defaults; a
 * wrong value throws a ConfigError naming the variable, the value and what is
 * expected (one line per bad setting).
 */
export function parseConfig(env: NodeJS.ProcessEnv): Config {
  const relevant: Record<string, string> = {};
  for (const key of Object.keys(envSchema.shape)) {
    const value = env[key];
    if (value !== undefined && value !== '') relevant[key] = value;
  }
  const parsed = envSchema.safeParse(relevant);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const key = String(issue.path[0] ?? '');
      return `invalid setting ${key}=${shownValue(settings[key], relevant[key] ?? '')}: ${issue.message}`;
    });
    throw new ConfigError(problems);
  }
  const e = parsed.data;
  // Settings each valid but not together, one line each (kept out of the schema so `envSchema.shape` stays a plain object of the variables).
  const combinations = services.flatMap((s) => s.problems?.(e) ?? []);
  if (combinations.length > 0) throw new ConfigError(combinations);
  return compose(e, env);
}

/** Where each service's shown-with-care values land in Config, and how they are shown: from the variables' declarations. */
const redactions: readonly (readonly [string, Exclude<Show, 'plain'>])[] = services.flatMap((s) =>
  Object.entries<readonly string[]>(s.redacts ?? {}).map(([path, keys]) => {
    const show = leafShow(keys.map((k) => settings[k]?.show ?? 'plain'));
    if (show === undefined) throw new Error(`config: ${path} is redacted but carries no secret or URL setting`);
    return [path, show] as const;
  }),
);

// Every variable that must not be printed as it is lands somewhere redactConfig() hides it.
for (const [key, s] of Object.entries(settings)) {
  const covered = services.some((svc) => Object.values<readonly string[]>(svc.redacts ?? {}).some((keys) => keys.includes(key)));
  if (s.show !== 'plain' && !covered) throw new Error(`config: ${key} is declared ${s.show} but no Config path redacts it`);
}

/** The settings as they may be shown: every secret hidden, in its field and in URLs. */
export function redactConfig(config: Config): Config {
  return redactLeaves(config, redactions);
}

/**
 * The process environment, with `./.env` (if present) filling in what the
 * environment leaves unset. The one place that reads `process.env`.
 */
export function loadEnv(cwd: string = process.cwd()): NodeJS.ProcessEnv {
  const file = `${cwd}/.env`;
  if (existsSync(file)) process.loadEnvFile(file);
  return process.env;
}
