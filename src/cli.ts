#!/usr/bin/env node
/**
 * The `ledgerline` command.
 *
 *   ledgerline start [--config server.properties] [--set key=value]...   run a broker
 *   ledgerline keys generate|rotate|list|needed ...                      end-to-end encryption keys (src/crypto/README.md)
 *   ledgerline tenants list|get|put|delete ...                           tenants, through the admin endpoint (src/tenants/README.md)
 *   ledgerline links list|get|put|delete ...                             cluster links, through the admin endpoint (src/replication/command.ts)
 *   ledgerline mirrors list|get|create|promote|failover ...              mirror topics, through the admin endpoint
 *   ledgerline replicated list|put|delete ...                            active-active topics, through the admin endpoint (src/replication/replicated-command.ts)
 *   ledgerline migrate --link L ... [--cutover]                          move topics and groups over from a live Kafka cluster
 *   ledgerline version                                                   print the version
 *
 * Configuration uses Kafka's names (listeners, log.dirs, num.partitions, ...); see src/config.ts for the
 * sources and their order. SIGTERM or SIGINT shuts the broker down gracefully.
 */
import { readFileSync } from 'node:fs';
import { ConfigError, loadConfig } from './config.js';
import { KEYS_USAGE } from './crypto/keys-usage.js';
import { createLogger } from './observability/logger.js';
import { routeProcessWarnings } from './observability/process-warnings.js';
import { LINKS_USAGE, MIGRATE_USAGE, MIRRORS_USAGE, REPLICATED_USAGE } from './replication/usage.js';
import { Broker } from './server/broker.js';
import { reexecWithBrokerThreads } from './server/gc-threads.js';
import { tuneHeapForBroker } from './server/heap-tuning.js';
import { TENANTS_USAGE } from './tenants/tenants-usage.js';

/** package.json of the installation, found upwards from this file (src/ when run from source, dist/src/ when built). */
function packageVersion(): string {
  for (let dir = new URL('.', import.meta.url); ; dir = new URL('..', dir)) {
    try {
      return (JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as { version: string }).version;
    } catch {
      if (dir.pathname === '/') return 'unknown';
    }
  }
}

const pkg = { version: packageVersion() };

const USAGE = `usage:
  ledgerline start [--config server.properties] [--set key=value]...
${KEYS_USAGE.split('\n').slice(1).join('\n')}
${[TENANTS_USAGE, LINKS_USAGE, MIRRORS_USAGE, REPLICATED_USAGE, MIGRATE_USAGE].map((u) => u.split('\n').slice(1, -1).join('\n')).join('\n')}
  ledgerline version
${TENANTS_USAGE.split('\n').at(-1)}`;

async function start(args: string[]): Promise<number> {
  // First, before anything is opened: V8's worker pool is sized as node starts (src/server/gc-threads.ts).
  const threads = reexecWithBrokerThreads();
  let file: string | undefined;
  const overrides: [string, string][] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--config' || a === '-c') file = args[++i];
    else if (a.startsWith('--config=')) file = a.slice('--config='.length);
    else if (a === '--set' || a.startsWith('--set=')) {
      const kv = a === '--set' ? args[++i] : a.slice('--set='.length);
      const eq = kv?.indexOf('=') ?? -1;
      if (!kv || eq <= 0) {
        console.error(`ledgerline: --set needs key=value, got ${JSON.stringify(kv)}`);
        return 2;
      }
      overrides.push([kv.slice(0, eq), kv.slice(eq + 1)]);
    } else {
      console.error(`ledgerline: unknown option ${JSON.stringify(a)}\n${USAGE}`);
      return 2;
    }
  }
  let config;
  try {
    config = loadConfig({ file, env: process.env, overrides });
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(`ledgerline: ${e.message}`);
      return 2;
    }
    throw e;
  }
  const log = createLogger();
  routeProcessWarnings(log);
  const heap = tuneHeapForBroker(process.execArgv, (liveBytes, percent) => log.trace({ liveBytes, percent }, 'full collection: heap growing percent for the next'));
  if (heap.flags.length > 0) log.debug({ v8Flags: heap.flags }, 'V8 flags set for a broker (src/server/heap-tuning.ts)');
  if (threads !== 'kept') log.info({ reason: threads }, "V8's worker pool keeps Node's default size (src/server/gc-threads.ts)");
  const broker = new Broker(config, log);
  let stopping: Promise<void> | null = null;
  const shutdown = (signal: string): void => {
    if (stopping) return;
    log.info({ signal }, 'shutting down');
    stopping = broker.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  try {
    await broker.start();
  } catch (err) {
    log.fatal({ err }, 'failed to start');
    await broker.stop().catch(() => undefined);
    return 1;
  }
  const where = broker.bound.map((b) => `${b.name}://${b.host}:${b.boundPort}`).join(', ');
  if (process.stdout.isTTY) console.log(`Ledgerline ${pkg.version} listening on ${where}; data in ${config.dataDir}`);
  return -1; // keep running
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'version':
    case '--version':
      console.log(`ledgerline ${pkg.version}`);
      return 0;
    case 'start':
      return start(rest);
    case 'keys':
      // Loaded only for this command: `ledgerline start` does not pay for the client it uses.
      return (await import('./crypto/keys-command.js')).keysCommand(rest);
    case 'tenants':
      return (await import('./tenants/tenants-command.js')).tenantsCommand(rest);
    case 'links':
      return (await import('./replication/command.js')).linksCommand(rest);
    case 'mirrors':
      return (await import('./replication/command.js')).mirrorsCommand(rest);
    case 'replicated':
      return (await import('./replication/replicated-command.js')).replicatedCommand(rest);
    case 'migrate':
      return (await import('./replication/command.js')).migrateCommand(rest);
    case undefined:
    case 'help':
    case '--help':
      console.log(USAGE);
      return command === undefined ? 2 : 0;
    default:
      console.error(`ledgerline: unknown command ${JSON.stringify(command)}\n${USAGE}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  },
);
