/**
 * `agentledger` command line: one file per command in this folder. Exit codes:
 * 0 success, 1 the command ran and found a problem, 2 bad usage or settings.
 */
import { ConfigError, loadEnv, parseConfig, type Config } from '../config/index.js';
import { guardEventLoop } from '../observability/frozen-loop.js';
import { createLogger, logFormat } from '../observability/logger.js';
import { UsageError, type Command } from './command.js';
import { brokenPipe, failureMessage } from '../errors/errors.js';

/**
 * Every command, by name, in the order `--help` lists them. A command's module
 * is imported only when that command runs: a read such as `report` then
 * loads neither kafkajs nor BullMQ, which halves its start (about 0.4 s of
 * CPU instead of 0.8 s here).
 */
const commands: ReadonlyArray<readonly [string, () => Promise<Command>]> = [
  ['ingest', async () => (await import('./ingest.js')).ingestCommand],
  ['worker', async () => (await import('./worker.js')).workerCommand],
  ['migrate', async () => (await import('./migrate.js')).migrateCommand],
  ['verify', async () => (await import('./verify.js')).verifyCommand],
  ['craze', async () => (await import('./craze.js')).crazeCommand],
  ['sessions', async () => (await import('./sessions.js')).sessionsCommand],
  ['loops', async () => (await import('./loops.js')).loopsCommand],
  ['spend', async () => (await import('./spend.js')).spendCommand],
  ['rollups', async () => (await import('./rollups.js')).rollupsCommand],
  ['report', async () => (await import('./report.js')).reportCommand],
  ['alerts', async () => (await import('./alerts.js')).alertsCommand],
  ['serve', async () => (await import('./serve.js')).serveCommand],
  ['doctor', async () => (await import('./doctor.js')).doctorCommand],
  ['config', async () => (await import('./config.js')).configCommand],
  ['produce-demo', async () => (await import('./produce.js')).produceDemoCommand],
];

/** Every command loaded: for the usage text, which lists them all. */
async function allCommands(): Promise<Command[]> {
  return Promise.all(commands.map(([, load]) => load()));
}

async function usage(): Promise<string> {
  const all = await allCommands();
  const width = Math.max(...all.map((c) => c.name.length));
  return [
    'agentledger - verify, store exactly once and roll up what AI agents cost',
    '',
    'Usage: agentledger <command> [options]',
    '',
    'Commands:',
    ...all.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Run `agentledger <command> --help` for a command\'s options.',
    'Settings come from AGENTLEDGER_* environment variables (and ./.env); `agentledger config` lists them.',
  ].join('\n');
}

export async function main(argv: string[]): Promise<number> {
  // `agentledger verify x | head` closes stdout early: that is not an error.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (brokenPipe(err)) process.exit(process.exitCode ?? 0);
    throw err;
  });
  const [name, ...rest] = argv;
  const out = (line: string): void => void process.stdout.write(line + '\n');
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    out(await usage());
    return name === undefined ? 2 : 0;
  }
  const load = commands.find(([n]) => n === name)?.[1];
  if (!load) {
    process.stderr.write(`agentledger: unknown command "${name}"\n\n${await usage()}\n`);
    return 2;
  }
  const command = await load();
  if (command.name !== name) throw new Error(`the command table names ${name} but its module is ${command.name}`);
  if (rest.includes('--help') || rest.includes('-h')) {
    out(command.help);
    return 0;
  }
  let config: Config;
  try {
    config = parseConfig(loadEnv());
  } catch (err) {
    if (err instanceof ConfigError) {
      for (const problem of err.problems) process.stderr.write(`agentledger: ${problem}\n`);
      return 2;
    }
    throw err;
  }
  const format = logFormat(config.logFormat);
  const log = createLogger(config.logLevel, {}, { format });
  const guard =
    command.longRunning && config.frozenLoopExitMs > 0
      ? guardEventLoop({ limitMs: config.frozenLoopExitMs, setting: 'AGENTLEDGER_FROZEN_LOOP_EXIT_MS', format, level: config.logLevel }, (err) =>
          log.warn('the frozen-loop guard stopped; the process goes on without it', { error: failureMessage(err) }),
        )
      : undefined;
  try {
    return await command.run(rest, { config, log, out });
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`agentledger ${name}: ${err.message}\n`);
      return 2;
    }
    log.error(`${name} failed`, { error: failureMessage(err) });
    // Nothing of ours is left to finish, but a client still retrying in the
    // background (or ingest's metrics server) would keep the process alive:
    // the failure must reach the shell or supervisor.
    setTimeout(() => process.exit(1), 1000).unref();
    return 1;
  } finally {
    await guard?.stop();
  }
}
