/**
 * How a setting is declared: its zod schema (validation, coercion, default),
 * its description as data (docs/configuration.md is generated from it) and
 * how its value may be shown. Each service module (kafka.ts, clickhouse.ts, …)
 * declares its variables once with setting() or secret(), maps them into its
 * part of the grouped Config and checks the combinations that concern it.
 */
import { accessSync, constants as fsConstants, statSync } from 'node:fs';
import { z } from 'zod';

/**
 * How a value may be shown in an error line and in `agentledger config`:
 * `plain` as it is, `secret` not at all, `url` without its password,
 * `origin` as scheme, host and port only (a webhook's path is often its token).
 */
export type Show = 'plain' | 'secret' | 'url' | 'origin';

export interface Setting<S extends z.ZodType = z.ZodType> {
  readonly schema: S;
  /** One Markdown paragraph: what the setting does, its unit and range. */
  readonly doc: string;
  readonly show: Show;
  /** What leaving an optional setting unset means, for the table (e.g. `no SASL`). */
  readonly unset: string | undefined;
}

interface SettingOptions {
  /** What leaving it unset means (a setting without a default). */
  readonly unset?: string;
  /** A URL: shown without its password (`url`) or as its origin only (`origin`). */
  readonly show?: 'url' | 'origin';
}

/** Whitespace of a multi-line template collapsed: the description is one paragraph. */
const paragraph = (doc: string): string => doc.replace(/\s+/g, ' ').trim();

/** A setting that may be shown (URLs: see SettingOptions.show). */
export function setting<S extends z.ZodType>(schema: S, doc: string, options: SettingOptions = {}): Setting<S> {
  return { schema, doc: paragraph(doc), show: options.show ?? 'plain', unset: options.unset };
}

/** A password, token or shared secret: never printed, in an error line or in `agentledger config`. */
export function secret<S extends z.ZodType>(schema: S, doc: string, options: { readonly unset?: string } = {}): Setting<S> {
  return { schema, doc: paragraph(doc), show: 'secret', unset: options.unset };
}

export type Settings = Readonly<Record<string, Setting>>;

/** The zod shape of a group of settings. */
export type Shape<V extends Settings> = { [K in keyof V]: V[K]['schema'] };

/** The parsed values of a group of settings. */
export type EnvOf<V extends Settings> = z.infer<z.ZodObject<Shape<V>>>;

export function shapeOf<V extends Settings>(vars: V): Shape<V> {
  return Object.fromEntries(Object.entries(vars).map(([key, s]) => [key, s.schema])) as Shape<V>;
}

/**
 * One service's settings: its variables, their mapping into its part of the
 * grouped Config, the combinations it refuses (one line each), and where its
 * non-plain values land in that part (`redacts`: a Config path, dotted, and
 * the variables whose value it carries) so redactConfig() can hide them.
 */
export interface Service<V extends Settings, C> {
  /** Heading of its section in docs/configuration.md. */
  readonly title: string;
  readonly vars: V;
  readonly config: (e: EnvOf<V>, raw: NodeJS.ProcessEnv) => C;
  readonly problems?: (e: EnvOf<V>) => string[];
  readonly redacts?: Readonly<Record<string, readonly (keyof V & string)[]>>;
}

/** Declares a service (an identity: it only lets TypeScript infer `e` from `vars`). */
export function service<V extends Settings, C>(def: Service<V, C>): Service<V, C> {
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
export const httpUrlLike = (example: string) => z.string().url({ protocol: /^https?$/, message: `expected an http(s) URL such as ${example}` });

/** A file this process can read (a CA, certificate or key): checked at boot, not at the first connection. */
export const readableFile = z.string().refine(
  (path) => {
    try {
      accessSync(path, fsConstants.R_OK);
      return statSync(path).isFile();
    } catch {
      return false;
    }
  },
  { message: 'expected a readable file' },
);

export const flag = z.enum(['true', 'false'], { message: 'expected true or false' }).transform((v) => v === 'true');

export const positiveInt = (max: number) =>
  z.coerce
    .number({ message: 'expected a whole number' })
    .int('expected a whole number')
    .min(1, 'expected a number >= 1')
    .max(max, `expected a number <= ${max}`);

/** A time limit in ms from 1000 to `max`, or `0` for off. */
export const msOrOff = (max: number) =>
  z.coerce
    .number({ message: 'expected a whole number' })
    .int('expected a whole number')
    .refine((n) => n === 0 || (n >= 1000 && n <= max), `expected 0 (off) or a number from 1000 to ${max}`);

/** A TCP port; `min` 0 lets `0` mean "off". */
export const port = (min: 0 | 1) =>
  z.coerce
    .number({ message: 'expected a port number' })
    .int('expected a port number')
    .min(min, `expected a port number ${min}-65535`)
    .max(65535, `expected a port number ${min}-65535`);

export const hostName = z.string().regex(/^[A-Za-z0-9.:_-]{1,253}$/, 'expected a host name or IP address');

export const userName = z.string().min(1, 'expected a user name');
