/**
 * `agentledger` command line: one file per command in this folder. Exit codes:
 * 0 success, 1 the command ran and found a problem, 2 bad usage or settings.
 */
import { ConfigError, loadEnv, parseConfig, type Config } from '../config/index.js';
import { guardEventLoop } from '../observability/frozen-loop.js';
import { createLogger, logFormat } from '../observability/logger.js';
import { alertsCommand } from './alerts.js';
import { UsageError, type Command } from './command.js';
import { configCommand } from './config.js';
import { crazeCommand } from './craze.js';
import { doctorCommand } from './doctor.js';
import { ingestCommand } from './ingest.js';
import { loopsCommand } from './loops.js';
import { migrateCommand } from './migrate.js';
import { reportCommand } from './report.js';
import { rollupsCommand } from './rollups.js';
import { serveCommand } from './serve.js';
import { sessionsCommand } from './sessions.js';
import { spendCommand } from './spend.js';
import { produceDemoCommand } from './produce.js';
import { verifyCommand } from './verify.js';
import { workerCommand } from './worker.js';
import { failureMessage } from '../observability/errors.js';

const commands: readonly Command[] = [
  ingestCommand,
  workerCommand,
  migrateCommand,
  verifyCommand,
  crazeCommand,
  sessionsCommand,
  loopsCommand,
  spendCommand,
  rollupsCommand,
  reportCommand,
  alertsCommand,
  serveCommand,
  doctorCommand,
  configCommand,
  produceDemoCommand,
];

function usage(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    'agentledger - verify, store exactly once and roll up what AI agents cost',
    '',
    'Usage: agentledger <command> [options]',
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Run `agentledger <command> --help` for a command\'s options.',
    'Settings come from AGENTLEDGER_* environment variables (and ./.env); `agentledger config` lists them.',
  ].join('\n');
}

export async function main(argv: string[]): Promise<number> {
  // `agentledger verify x | head` closes stdout early: that is not an error.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw err;
  });
  const [name, ...rest] = argv;
  const out = (line: string): void => void process.stdout.write(line + '\n');
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    out(usage());
    return name === undefined ? 2 : 0;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) {
    process.stderr.write(`agentledger: unknown command "${name}"\n\n${usage()}\n`);
    return 2;
  }
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
