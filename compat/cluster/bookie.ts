/**
 * Apache BookKeeper 4.17 bookies on 127.0.0.1 (org.apache.bookkeeper.server.Main with a bk_server.conf in
 * the bookie's directory), and the cluster's metadata (BookieShell initnewcluster). A bookie is ready once it
 * is registered under <ledgersRootPath>/available as "127.0.0.1:<port>" (its id, from advertisedAddress) and
 * its port accepts connections.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { classpathOrThrow } from './classpath.js';
import { COMMON_JVM_OPTIONS, JvmProcess, PortInUseError, fileSize, freePort, logShowsPortInUse, runJava, textTail } from './process.js';
import { connectZk, removeIfExists, type ZkClient } from './zk-client.js';

export interface BookieProcess {
  /** "127.0.0.1:<port>", its id in <ledgersRootPath>/available. */
  readonly address: string;
  readonly port: number;
  readonly dir: string;
  /** Its process is alive (a SIGSTOPped one counts). */
  readonly running: boolean;
  /** SIGTERM (the bookie unregisters and flushes), SIGKILL after 15 s. */
  stop(): Promise<void>;
  /** SIGKILL: its registration stays until its ZooKeeper session expires. */
  kill(): Promise<void>;
  /** SIGSTOP: the bookie stops answering; its session expires after zkTimeout. */
  pause(): void;
  /** SIGCONT. */
  resume(): void;
  /** Stops it if it runs (SIGTERM), then starts it again on the same directory and port (its cookie matches). */
  restart(): Promise<void>;
}

export interface BookieHandle extends BookieProcess {
  readonly pid: number | undefined;
  readonly logFile: string;
  readonly confFile: string;
}

export interface BookieOptions {
  zkConnect: string;
  /** Holds bk_server.conf, journal/, ledgers/ and bookie.log; a new temporary directory by default. */
  dir?: string;
  /** A free ephemeral port by default; for a directory that already holds a bookie, the port it had. */
  port?: number;
  /** Default /ledgers. */
  ledgersRootPath?: string;
  /** Runs the AutoRecovery daemon inside the bookie, re-replicating at once (lostBookieRecoveryDelay=0). */
  autoRecovery?: boolean;
  /** The garbage collector's period (BookKeeper's gcWaitTime). Default 60000 (a minute; BookKeeper's: 15 minutes). */
  gcWaitTimeMs?: number;
  /** The bookie's ZooKeeper session timeout (zkTimeout). Default 4000, so a dead bookie is seen quickly. */
  zkTimeoutMs?: number;
  /** More bk_server.conf lines; they win over the launcher's. */
  extraConf?: Record<string, string>;
  /** Keep it running after this process exits (the `cluster up` command). */
  detached?: boolean;
  /** How long to wait for the registration. Default 90 s. */
  readyTimeoutMs?: number;
}

export function metadataServiceUri(zkConnect: string, ledgersRootPath = '/ledgers'): string {
  return `zk+hierarchical://${zkConnect.replaceAll(',', ';')}${ledgersRootPath}`;
}

function writeConf(file: string, conf: Record<string, string>): void {
  writeFileSync(file, Object.entries(conf).map(([k, v]) => `${k}=${v}\n`).join(''));
}

/** The JVM options of a bookie: a small heap, bounded direct memory (Netty's pooled buffers). */
const BOOKIE_JVM_OPTIONS = ['-Xmx256m', '-Xms64m', '-XX:MaxDirectMemorySize=256m', ...COMMON_JVM_OPTIONS, '-Dio.netty.leakDetectionLevel=disabled'];

/**
 * Creates the cluster's metadata in ZooKeeper, as `bin/bookkeeper shell initnewcluster` does: the ledgers root
 * with its INSTANCEID, available/, available/readonly/, cookies/ and the layout. Fails if it already exists.
 */
export async function initBookKeeperMetadata(zkConnect: string, opts: { ledgersRootPath?: string; timeoutMs?: number } = {}): Promise<void> {
  const classpath = classpathOrThrow();
  const dir = mkdtempSync(join(tmpdir(), 'ledgerline-bkshell-'));
  const conf = join(dir, 'bk_shell.conf');
  writeConf(conf, { metadataServiceUri: metadataServiceUri(zkConnect, opts.ledgersRootPath), zkTimeout: '10000' });
  const r = await runJava(classpath, 'org.apache.bookkeeper.bookie.BookieShell', ['-conf', conf, 'initnewcluster'], opts.timeoutMs ?? 60_000);
  rmSync(dir, { recursive: true, force: true });
  if (r.code !== 0 || !/successfully/i.test(r.output)) {
    throw new Error(`BookieShell initnewcluster on ${zkConnect} failed (${r.code === null ? 'timed out' : `status ${r.code}`}):\n${textTail(r.output)}`);
  }
}

/** The session that owns the registration znode, or null when there is none. */
function owner(client: ZkClient, path: string): Promise<string | null> {
  return new Promise((resolve, reject) =>
    client.exists(path, (err, stat) => (err ? reject(err) : resolve(stat ? stat.ephemeralOwner.toString('hex') : null))),
  );
}

/**
 * Waits (a watch on the znode, no polling) until `path` exists and belongs to another session than
 * `staleOwner`: after a SIGKILL the dead bookie's znode stays until its session expires, and the restarted
 * bookie waits for that before it registers again.
 */
function waitForRegistration(client: ZkClient, path: string, staleOwner: string | null, proc: JvmProcess, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (err?: Error): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (err) reject(err);
      else resolve();
    };
    const timer = setTimeout(() => finish(new Error(`${path} did not appear within ${timeoutMs} ms`)), timeoutMs);
    proc.unlessExited(new Promise<never>(() => {})).catch((e: Error) => finish(e));
    const look = (): void => {
      if (done) return;
      client.exists(
        path,
        () => look(),
        (err, stat) => {
          if (err) return finish(err instanceof Error ? err : new Error(String(err)));
          if (stat && stat.ephemeralOwner.toString('hex') !== staleOwner) finish();
        },
      );
    };
    look();
  });
}

/** Resolves once 127.0.0.1:port accepts a TCP connection (retrying every 100 ms until the deadline). */
export async function waitForPort(port: number, timeoutMs: number, proc?: JvmProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect({ host: '127.0.0.1', port });
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    if (proc && !proc.running) throw new Error(`exited (${proc.exitStatus ?? 'stopped'})`);
    if (Date.now() > deadline) throw new Error(`127.0.0.1:${port} accepted no connection within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The bookiePort of the bk_server.conf a previous start wrote in `dir`, if any. */
function previousPort(dir: string): number | undefined {
  try {
    const m = /^bookiePort=(\d+)$/m.exec(readFileSync(join(dir, 'bk_server.conf'), 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

export async function startBookie(opts: BookieOptions): Promise<BookieHandle> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'ledgerline-bookie-'));
  const fresh = !existsSync(join(dir, 'journal', 'current'));
  if (opts.port !== undefined) return startBookieOn(opts, dir, opts.port);
  // A directory that already holds a bookie is that bookie again: its cookie names its port.
  if (!fresh) return startBookieOn(opts, dir, previousPort(dir) ?? (await freePort()));
  // An ephemeral port another process took before the bookie bound it: another one, up to three times. The
  // failed start may have written its cookie (which names the port) to its directories and to ZooKeeper:
  // both go, so that the next start is a new bookie again.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return await startBookieOn(opts, dir, port);
    } catch (e) {
      if (!(e instanceof PortInUseError) || attempt >= 3) throw e;
      for (const d of ['journal', 'ledgers']) rmSync(join(dir, d), { recursive: true, force: true });
      const client = await connectZk(opts.zkConnect, 30_000);
      try {
        await removeIfExists(client, `${opts.ledgersRootPath ?? '/ledgers'}/cookies/127.0.0.1:${port}`);
      } finally {
        client.close();
      }
    }
  }
}

async function startBookieOn(opts: BookieOptions, dir: string, port: number): Promise<BookieHandle> {
  const classpath = classpathOrThrow();
  const root = opts.ledgersRootPath ?? '/ledgers';
  const address = `127.0.0.1:${port}`;
  for (const d of ['journal', 'ledgers']) mkdirSync(join(dir, d), { recursive: true });
  const confFile = join(dir, 'bk_server.conf');
  const autoRecovery = opts.autoRecovery ?? false;
  writeConf(confFile, {
    bookiePort: String(port),
    // The bookie id is advertisedAddress:bookiePort; with listeningInterface set the bookie binds to that
    // address rather than 0.0.0.0 (BookieNettyServer), so it listens on loopback only.
    advertisedAddress: '127.0.0.1',
    listeningInterface: 'lo',
    allowLoopback: 'true',
    useHostNameAsBookieID: 'false',
    metadataServiceUri: metadataServiceUri(opts.zkConnect, root),
    zkTimeout: String(opts.zkTimeoutMs ?? 4000),
    journalDirectories: join(dir, 'journal'),
    ledgerDirectories: join(dir, 'ledgers'),
    ledgerStorageClass: 'org.apache.bookkeeper.bookie.SortedLedgerStorage',
    // Small files and buffers: many bookies on one machine.
    journalPreAllocSizeMB: '1',
    journalWriteBufferSizeKB: '64',
    logSizeLimit: String(16 * 1024 * 1024),
    entryLogFilePreallocationEnabled: 'false',
    skipListSizeLimit: String(8 * 1024 * 1024),
    skipListArenaChunkSize: String(1024 * 1024),
    fileInfoCacheInitialCapacity: '64',
    openFileLimit: '200',
    serverNumIOThreads: '2',
    numAddWorkerThreads: '1',
    numReadWorkerThreads: '2',
    numHighPriorityWorkerThreads: '1',
    numJournalCallbackThreads: '2',
    // A shared developer disk: full only when it really is.
    diskUsageThreshold: '0.99',
    diskUsageWarnThreshold: '0.98',
    diskUsageLwmThreshold: '0.97',
    minUsableSizeForIndexFileCreation: String(16 * 1024 * 1024),
    gcWaitTime: String(opts.gcWaitTimeMs ?? 60_000),
    httpServerEnabled: 'false',
    autoRecoveryDaemonEnabled: String(autoRecovery),
    // Re-replicate a lost bookie's ledgers at once rather than after the default grace.
    ...(autoRecovery ? { lostBookieRecoveryDelay: '0', auditorPeriodicBookieCheckInterval: '60', underreplicatedLedgerRecoveryGracePeriod: '0' } : {}),
    ...(opts.extraConf ?? {}),
  });
  const logFile = join(dir, 'bookie.log');
  const proc = new JvmProcess({
    label: `bookie ${address}`,
    classpath,
    mainClass: 'org.apache.bookkeeper.server.Main',
    args: ['-c', confFile],
    jvmOptions: BOOKIE_JVM_OPTIONS,
    logFile,
    cwd: dir,
    detached: opts.detached ?? false,
  });
  const registration = `${root}/available/${address}`;
  const readyTimeout = opts.readyTimeoutMs ?? 90_000;

  let logStart = 0;
  const launch = async (): Promise<void> => {
    const client = await connectZk(opts.zkConnect, 30_000);
    try {
      const stale = await owner(client, registration);
      logStart = fileSize(logFile);
      proc.start();
      await waitForRegistration(client, registration, stale, proc, readyTimeout);
      await waitForPort(port, 30_000, proc);
    } catch (e) {
      const tail = proc.logTail();
      await proc.kill();
      const E = logShowsPortInUse(logFile, logStart) ? PortInUseError : Error;
      throw new E(`bookie ${address} did not start: ${(e as Error).message}\n--- ${logFile} (tail)\n${tail}`);
    } finally {
      client.close();
    }
  };
  await launch();

  return {
    address,
    port,
    dir,
    logFile,
    confFile,
    get pid() {
      return proc.pid;
    },
    get running() {
      return proc.running;
    },
    stop: () => proc.stop(15_000),
    kill: () => proc.kill(),
    pause: () => proc.signal('SIGSTOP'),
    resume: () => proc.signal('SIGCONT'),
    restart: async () => {
      if (proc.running) {
        // A stopped JVM would never see SIGTERM.
        proc.signal('SIGCONT');
        await proc.stop(15_000);
      }
      await launch();
    },
  };
}
