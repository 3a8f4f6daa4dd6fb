import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Config } from '../config/index.js';
import type { Logger } from '../observability/logger.js';
import { UsageError } from '../read/input.js';
import { CODEC_NAMES, compressionType, isCodecName } from '../kafka/codecs.js';
import { failureMessage } from '../errors/errors.js';

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
  /** Runs until stopped: watched by the frozen-loop guard (AGENTLEDGER_FROZEN_LOOP_EXIT_MS). */
  readonly longRunning?: true;
  run(args: string[], ctx: CommandContext): Promise<number>;
}

export { UsageError } from '../read/input.js';

/** node:util parseArgs, with its errors turned into one-line usage errors. */
export function parseOptions<T extends ParseArgsConfig['options']>(args: string[], options: T, allowPositionals = false) {
  try {
    return parseArgs({ args, options, allowPositionals, strict: true });
  } catch (err) {
    // parseArgs explains some mistakes over several lines: a usage error is one.
    throw new UsageError(failureMessage(err));
  }
}

/**
 * A whole-number option (`--limit 20`): digits only, from `min` up to
 * Number.MAX_SAFE_INTEGER, else a usage error naming the option. Checked here,
 * at parse time, so a value the server cannot take is a usage error (exit 2),
 * not a failed query.
 */
export function wholeNumberOption(option: string, text: string, min: number): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < min) {
    throw new UsageError(`--${option} expects a whole number from ${min} to ${Number.MAX_SAFE_INTEGER}, got ${JSON.stringify(text)}`);
  }
  return value;
}

/** `--compression none|gzip|snappy|lz4|zstd` (absent: none) as kafkajs's codec, else a usage error. */
export function compressionOption(text: string | undefined): ReturnType<typeof compressionType> {
  const name = text ?? 'none';
  if (!isCodecName(name)) throw new UsageError(`--compression takes ${CODEC_NAMES.join(', ')}, got ${JSON.stringify(name)}`);
  return compressionType(name);
}
