/**
 * How a setting is declared: its zod schema (validation, coercion, default),
 * its description as data (docs/configuration.md is generated from it) and
 * how its value may be shown. Each service module (kafka.ts, clickhouse.ts, …)
 * declares its variables once with setting() or secret(), maps them into its
 * part of the grouped Config and checks the combinations that concern it.
 */
import { accessSync, constants as fsConstants, statSync } from 'node:fs';
import { z } from 'zod';
/** Whitespace of a multi-line template collapsed: the description is one paragraph. */
const paragraph = (doc) => doc.replace(/\s+/g, ' ').trim();
/** A setting that may be shown (URLs: see SettingOptions.show). */
export function setting(schema, doc, options = {}) {
    return { schema, doc: paragraph(doc), show: options.show ?? 'plain', unset: options.unset };
}
/** A password, token or shared secret: never printed, in an error line or in `agentledger config`. */
export function secret(schema, doc, options = {}) {
    return { schema, doc: paragraph(doc), show: 'secret', unset: options.unset };
}
export function shapeOf(vars) {
    return Object.fromEntries(Object.entries(vars).map(([key, s]) => [key, s.schema]));
}
/** Declares a service (an identity: it only lets TypeScript infer `e` from `vars`). */
export function service(def) {
    return def;
}
// --- Value types shared by several services ---
const hostPort = /^[A-Za-z0-9_.\-[\]:]+:\d{1,5}$/;
export const kafkaName = /^[A-Za-z0-9._-]{1,249}$/;
export const brokerList = z
    .string()
    .transform((s) => s.split(',').map((b) => b.trim()).filter((b) => b.length > 0))
    .refine((list) => list.length > 0 && list.every((b) => hostPort.test(b)), {
    message: 'expected a comma-separated list of host:port',
});
/** An http:// or https:// URL; `example` shows the expected shape in the error (one check, so one line per bad value). */
export const httpUrlLike = (example) => z.string().url({ protocol: /^https?$/, message: `expected an http(s) URL such as ${example}` });
/** A file this process can read (a CA, certificate or key): checked at boot, not at the first connection. */
export const readableFile = z.string().refine((path) => {
    try {
        accessSync(path, fsConstants.R_OK);
        return statSync(path).isFile();
    }
    catch {
        return false;
    }
}, { message: 'expected a readable file' });
export const flag = z.enum(['true', 'false'], { message: 'expected true or false' }).transform((v) => v === 'true');
export const positiveInt = (max) => z.coerce
    .number({ message: 'expected a whole number' })
    .int('expected a whole number')
    .min(1, 'expected a number >= 1')
    .max(max, `expected a number <= ${max}`);
/** A TCP port; `min` 0 lets `0` mean "off". */
export const port = (min) => z.coerce
    .number({ message: 'expected a port number' })
    .int('expected a port number')
    .min(min, `expected a port number ${min}-65535`)
    .max(65535, `expected a port number ${min}-65535`);
export const hostName = z.string().regex(/^[A-Za-z0-9.:_-]{1,253}$/, 'expected a host name or IP address');
export const userName = z.string().min(1, 'expected a user name');
//# sourceMappingURL=setting.js.map