import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Config } from '../config/index.js';
import type { Logger } from '../observability/logger.js';

export interface CommandContext {
  readonly config: Config;
  readonly log: Logger;
  /** Writes one line of command output to stdout. */
  readonly out: (line: string) => void;
}

export interface Command {
  readonly name: string;
  readonly summary: string;
  readonly help: string;
  run(args: string[], ctx: CommandContext): Promise<number>;
}

/** Bad command-line usage: reported in one line, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** node:util parseArgs, with its errors turned into one-line usage errors. */
export function parseOptions<T extends ParseArgsConfig['options']>(args: string[], options: T, allowPositionals = false) {
  try {
    return parseArgs({ args, options, allowPositionals, strict: true });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}
