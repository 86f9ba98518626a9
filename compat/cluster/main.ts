/**
 * The development cluster from the command line (compat/cluster/README.md):
 *
 *   npm run cluster -- up --bookies 3 [--dir D] [--auto-recovery] [--foreground]
 *   npm run cluster -- status [--dir D]
 *   npm run cluster -- down [--dir D]
 *
 * `up` starts ZooKeeper and the bookies, prints the ZooKeeper connect string and BookKeeper's
 * metadataServiceUri, and writes <dir>/cluster.json so that `down` (or `status`) finds them; the processes
 * keep running after it exits. With --foreground it stays attached and stops them all on Ctrl-C (SIGINT) or
 * SIGTERM. `--brokers N` adds N Ledgerline brokers, members of one cluster on that ZooKeeper (metadata) and
 * those bookies (partition data), each with its own data directory and log under <dir>/broker-<id>.
 */
import { existsSync, readFileSync, readdirSync, rmSync, unlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { WORK_DIR } from '../lib/paths.js';
import { BUILD_COMMAND, bookKeeperClasspath } from './classpath.js';
import { startClusterBroker, type ClusterBroker } from './brokers.js';
import { startDevCluster } from './dev-cluster.js';
import { alive } from './process.js';

const HELP = `Usage: npm run cluster -- <command> [options]

  up        start ZooKeeper, the bookies and the brokers; print where they are; write <dir>/cluster.json
    --bookies N        bookies to start (default 3)
    --brokers N        Ledgerline brokers on them (default 0): one cluster, RF min(3, brokers, bookies)
    --dir D            where the processes keep their data and logs (default compat/.work/cluster)
    --auto-recovery    run BookKeeper's AutoRecovery in every bookie (re-replication at once)
    --foreground       stay attached; Ctrl-C stops everything
  status    print the cluster.json of --dir and which of its processes are alive
  down      stop the processes of --dir's cluster.json (SIGTERM, SIGKILL after 15 s)
  --help`;

const STATE_FILE = 'cluster.json';

interface StateProcess {
  name: string;
  pid: number;
  address: string;
  dir: string;
  log: string;
}

interface State {
  dir: string;
  zkConnect: string;
  metadataServiceUri: string;
  /** The launcher, when it stays attached (--foreground): `down` ends it too. */
  launcherPid: number | null;
  startedAt: string;
  /** Set by `down` (and a --foreground launcher's Ctrl-C): the file stays so that `up` knows the directory. */
  stoppedAt?: string;
  processes: StateProcess[];
}

function readState(dir: string): State | null {
  const file = join(dir, STATE_FILE);
  if (!existsSync(file)) return null;
  return JSON.parse(readFileSync(file, 'utf8')) as State;
}

function liveProcesses(state: State): StateProcess[] {
  return state.processes.filter((p) => alive(p.pid));
}

/** SIGTERM to each process group, then waits (deadline 15 s) for all to go, SIGKILL to what is left. */
async function stopProcesses(procs: readonly StateProcess[]): Promise<void> {
  const signal = (p: StateProcess, sig: NodeJS.Signals): void => {
    try {
      process.kill(-p.pid, sig);
    } catch {
      try {
        process.kill(p.pid, sig);
      } catch {
        // gone
      }
    }
  };
  for (const p of procs) {
    signal(p, 'SIGCONT');
    signal(p, 'SIGTERM');
  }
  const deadline = Date.now() + 15_000;
  while (procs.some((p) => alive(p.pid)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  for (const p of procs) if (alive(p.pid)) signal(p, 'SIGKILL');
}

function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

async function up(dir: string, bookies: number, brokers: number, autoRecovery: boolean, foreground: boolean): Promise<void> {
  if (bookKeeperClasspath() === undefined) fail(`BookKeeper is not built: run ${BUILD_COMMAND} (or npm run compat)`);
  const previous = readState(dir);
  if (previous) {
    const live = liveProcesses(previous);
    if (live.length > 0) fail(`a cluster is running in ${dir} (${live.map((p) => `${p.name} pid ${p.pid}`).join(', ')}): npm run cluster -- down --dir ${dir}`);
    // What a stopped cluster of ours left: start afresh (initnewcluster needs an empty ZooKeeper).
    for (const name of readdirSync(dir)) if (name === 'zk' || /^(bookie|broker)-\d+$/.test(name)) rmSync(join(dir, name), { recursive: true, force: true });
    unlinkSync(join(dir, STATE_FILE));
  } else if (existsSync(dir) && readdirSync(dir).length > 0) {
    fail(`${dir} is not empty and holds no ${STATE_FILE}: choose another --dir`);
  }
  mkdirSync(dir, { recursive: true });
  const t0 = Date.now();
  const cluster = await startDevCluster({ bookies, dir, autoRecovery, detached: !foreground }).catch((e: unknown) => fail(`cluster up failed: ${(e as Error).message}`));
  // Kafka's defaults for a replicated topic where the cluster allows them: RF 3, min.insync 2 (E 3, Qw 3, Qa 2).
  const replicationFactor = Math.min(3, Math.max(1, brokers), bookies);
  const started: ClusterBroker[] = [];
  try {
    for (let id = 1; id <= brokers; id++) {
      started.push(
        await startClusterBroker({
          nodeId: id,
          dir: join(dir, `broker-${id}`),
          zkConnect: cluster.zkConnect,
          metadataServiceUri: cluster.metadataServiceUri,
          replicationFactor,
          minInsyncReplicas: Math.min(2, replicationFactor),
        }),
      );
    }
  } catch (e) {
    await stopProcesses(started.map((b) => ({ name: `broker-${b.nodeId}`, pid: b.pid, address: b.bootstrap, dir: b.dir, log: b.logFile })));
    await cluster.stop();
    fail(`cluster up failed: ${(e as Error).message}`);
  }
  const brokerProcesses = started.map((b) => ({ name: `broker-${b.nodeId}`, pid: b.pid, address: b.bootstrap, dir: b.dir, log: b.logFile }));
  const state: State = {
    dir,
    zkConnect: cluster.zkConnect,
    metadataServiceUri: cluster.metadataServiceUri,
    launcherPid: foreground ? process.pid : null,
    startedAt: new Date().toISOString(),
    processes: [
      { name: 'zookeeper', pid: cluster.zk.pid!, address: cluster.zk.connectString, dir: cluster.zk.dir, log: cluster.zk.logFile },
      ...cluster.bookies.map((b, i) => ({ name: `bookie-${i + 1}`, pid: b.pid!, address: b.address, dir: b.dir, log: b.logFile })),
      ...brokerProcesses,
    ],
  };
  writeFileSync(join(dir, STATE_FILE), JSON.stringify(state, null, 2) + '\n');
  console.log(`ZooKeeper ${cluster.zkConnect}, ${bookies} bookie(s) up in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  console.log(`zkConnect=${cluster.zkConnect}`);
  console.log(`metadataServiceUri=${cluster.metadataServiceUri}`);
  for (const b of cluster.bookies) console.log(`bookie ${b.address}  ${b.dir}`);
  for (const b of started) console.log(`broker ${b.nodeId} ${b.bootstrap}  ${b.logFile}`);
  if (started.length > 0) console.log(`bootstrap.servers=${started.map((b) => b.bootstrap).join(',')}`);
  console.log(`state: ${join(dir, STATE_FILE)}`);
  if (!foreground) {
    console.log(`stop with: npm run cluster -- down --dir ${dir}`);
    return;
  }
  console.log('Ctrl-C stops the cluster');
  await new Promise<void>((resolveStop) => {
    const stop = (): void => resolveStop();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  console.log('stopping...');
  await stopProcesses(brokerProcesses);
  await cluster.stop();
  markStopped(dir, state);
  console.log('stopped');
}

function markStopped(dir: string, state: State): void {
  writeFileSync(join(dir, STATE_FILE), JSON.stringify({ ...state, launcherPid: null, stoppedAt: new Date().toISOString() }, null, 2) + '\n');
}

async function down(dir: string): Promise<void> {
  const state = readState(dir);
  if (!state) fail(`no ${STATE_FILE} in ${dir}: nothing to stop`);
  if (state.launcherPid !== null && state.launcherPid !== process.pid && alive(state.launcherPid)) {
    // An attached launcher stops its own cluster on SIGTERM.
    process.kill(state.launcherPid, 'SIGTERM');
  }
  // Brokers first (a graceful leave seals their ledgers), then the bookies (they unregister from ZooKeeper
  // while it is still there), then ZooKeeper.
  await stopProcesses(state.processes.filter((p) => p.name.startsWith('broker-')));
  await stopProcesses(state.processes.filter((p) => p.name.startsWith('bookie-')));
  await stopProcesses(state.processes.filter((p) => p.name === 'zookeeper'));
  const left = liveProcesses(state);
  if (left.length > 0) fail(`still running: ${left.map((p) => `${p.name} pid ${p.pid}`).join(', ')}`);
  markStopped(dir, state);
  console.log(`stopped ${state.processes.length} process(es); data and logs stay in ${dir} (the next up there starts afresh)`);
}

function status(dir: string): void {
  const state = readState(dir);
  if (!state) fail(`no ${STATE_FILE} in ${dir}: no cluster`);
  console.log(state.stoppedAt ? `stopped at ${state.stoppedAt}` : `started at ${state.startedAt}`);
  console.log(`zkConnect=${state.zkConnect}`);
  console.log(`metadataServiceUri=${state.metadataServiceUri}`);
  for (const p of state.processes) console.log(`${p.name.padEnd(10)} ${p.address.padEnd(16)} pid ${String(p.pid).padEnd(8)} ${alive(p.pid) ? 'running' : 'gone'}  ${p.log}`);
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    args: process.argv.slice(2),
    allowPositionals: true,
    options: {
      bookies: { type: 'string', default: '3' },
      brokers: { type: 'string', default: '0' },
      dir: { type: 'string', default: join(WORK_DIR, 'cluster') },
      'auto-recovery': { type: 'boolean', default: false },
      foreground: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  const [command, ...rest] = positionals;
  if (values.help || command === undefined) {
    console.log(HELP);
    return;
  }
  if (rest.length > 0) fail(`unexpected arguments: ${rest.join(' ')}\n${HELP}`);
  const count = (name: string, v: string, min: number): number => {
    if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > 16) fail(`--${name} must be a number from ${min} to 16, not ${v}`);
    return Number(v);
  };
  const dir = resolve(values.dir);
  switch (command) {
    case 'up':
      return up(dir, count('bookies', values.bookies, 1), count('brokers', values.brokers, 0), values['auto-recovery'], values.foreground);
    case 'down':
      return down(dir);
    case 'status':
      return status(dir);
    default:
      fail(`unknown command ${command}\n${HELP}`);
  }
}

await main();
