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
import { shapeOf } from './setting.js';
import { worker } from './worker.js';
export { migratorSettings } from './clickhouse.js';
export { redisUrlWithPassword } from './redis.js';
export { redactUrl, redactWebhookUrl } from './redact.js';
/** The services in the order of docs/configuration.md, of the error lines and of `agentledger config`. */
export const services = [kafka, clickhouse, redis, worker, alerts, ingest, observability, serve];
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
/** Every variable's declaration, by name. */
export const settings = Object.fromEntries(services.flatMap((s) => Object.entries(s.vars)));
function compose(e, raw) {
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
/** A setting that failed validation; `message` is the one line shown to the user. */
export class ConfigError extends Error {
    problems;
    name = 'ConfigError';
    constructor(problems) {
        super(problems.join('\n'));
        this.problems = problems;
    }
}
/**
 * Parses the environment. Unset and empty variables take their defaults; a
 * wrong value throws a ConfigError naming the variable, the value and what is
 * expected (one line per bad setting).
 */
export function parseConfig(env) {
    const relevant = {};
    for (const key of Object.keys(envSchema.shape)) {
        const value = env[key];
        if (value !== undefined && value !== '')
            relevant[key] = value;
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
    if (combinations.length > 0)
        throw new ConfigError(combinations);
    return compose(e, env);
}
/** Where each service's shown-with-care values land in Config, and how they are shown: from the variables' declarations. */
const redactions = services.flatMap((s) => Object.entries(s.redacts ?? {}).map(([path, keys]) => {
    const show = leafShow(keys.map((k) => settings[k]?.show ?? 'plain'));
    if (show === undefined)
        throw new Error(`config: ${path} is redacted but carries no secret or URL setting`);
    return [path, show];
}));
// Every variable that must not be printed as it is lands somewhere redactConfig() hides it.
for (const [key, s] of Object.entries(settings)) {
    const covered = services.some((svc) => Object.values(svc.redacts ?? {}).some((keys) => keys.includes(key)));
    if (s.show !== 'plain' && !covered)
        throw new Error(`config: ${key} is declared ${s.show} but no Config path redacts it`);
}
/** The settings as they may be shown: every secret hidden, in its field and in URLs. */
export function redactConfig(config) {
    return redactLeaves(config, redactions);
}
/**
 * The process environment, with `./.env` (if present) filling in what the
 * environment leaves unset. The one place that reads `process.env`.
 */
export function loadEnv(cwd = process.cwd()) {
    const file = `${cwd}/.env`;
    if (existsSync(file))
        process.loadEnvFile(file);
    return process.env;
}
//# sourceMappingURL=index.js.map