/**
 * A standalone ZooKeeper 3.9 server on 127.0.0.1 (ZooKeeperServerMain with a zoo.cfg in its directory):
 * the metadata service of the development cluster. Ready once a session can be opened.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { classpathOrThrow } from './classpath.js';
import { COMMON_JVM_OPTIONS, JvmProcess, PortInUseError, fileSize, freePort, logShowsPortInUse } from './process.js';
import { connectZk } from './zk-client.js';

export interface ZooKeeperProcess {
  readonly connectString: string;
  readonly port: number;
  readonly dir: string;
  /** SIGTERM, SIGKILL after 10 s. */
  stop(): Promise<void>;
  /** SIGKILL. */
  kill(): Promise<void>;
}

export interface ZooKeeperOptions {
  /** Holds zoo.cfg, data/ and zookeeper.log; a new temporary directory by default. */
  dir?: string;
  /** A free ephemeral port by default. */
  port?: number;
  /** ZooKeeper's tickTime; the smallest session timeout is twice it. Default 500 ms (ZooKeeper's: 2000). */
  tickTimeMs?: number;
  /** Default 30000: a client asking for more gets this. */
  maxSessionTimeoutMs?: number;
  /** Keep it running after this process exits (the `cluster up` command). */
  detached?: boolean;
  /** How long to wait for it to accept a session. Default 60 s. */
  readyTimeoutMs?: number;
}

export interface ZooKeeperHandle extends ZooKeeperProcess {
  readonly pid: number | undefined;
  readonly logFile: string;
}

export async function startZooKeeper(opts: ZooKeeperOptions = {}): Promise<ZooKeeperHandle> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'ledgerline-zk-'));
  if (opts.port !== undefined) return startZooKeeperOn(opts, dir, opts.port);
  // An ephemeral port another process took before ZooKeeper bound it: another one, up to three times.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startZooKeeperOn(opts, dir, await freePort());
    } catch (e) {
      if (!(e instanceof PortInUseError) || attempt >= 3) throw e;
    }
  }
}

async function startZooKeeperOn(opts: ZooKeeperOptions, dir: string, port: number): Promise<ZooKeeperHandle> {
  const classpath = classpathOrThrow();
  mkdirSync(join(dir, 'data'), { recursive: true });
  const tickTime = opts.tickTimeMs ?? 500;
  const cfg = join(dir, 'zoo.cfg');
  writeFileSync(
    cfg,
    [
      `tickTime=${tickTime}`,
      `dataDir=${join(dir, 'data')}`,
      `clientPort=${port}`,
      'clientPortAddress=127.0.0.1',
      `minSessionTimeout=${2 * tickTime}`,
      `maxSessionTimeout=${opts.maxSessionTimeoutMs ?? 30_000}`,
      'maxClientCnxns=0',
      // No AdminServer (Jetty on 8080) and the four-letter words for health checks only.
      'admin.enableServer=false',
      '4lw.commands.whitelist=ruok,srvr,stat,mntr',
      // Snapshots and logs are purged as they pile up in a long session.
      'autopurge.snapRetainCount=3',
      'autopurge.purgeInterval=1',
      'preAllocSize=4096',
      '',
    ].join('\n'),
  );
  const logFile = join(dir, 'zookeeper.log');
  const proc = new JvmProcess({
    label: `ZooKeeper 127.0.0.1:${port}`,
    classpath,
    mainClass: 'org.apache.zookeeper.server.ZooKeeperServerMain',
    args: [cfg],
    jvmOptions: ['-Xmx128m', '-Xms32m', ...COMMON_JVM_OPTIONS, '-Dzookeeper.jmx.log4j.disable=true'],
    logFile,
    cwd: dir,
    detached: opts.detached ?? false,
  });
  const logStart = fileSize(logFile);
  proc.start();
  const connectString = `127.0.0.1:${port}`;
  const readyTimeout = opts.readyTimeoutMs ?? 30_000;
  // Until it listens, connecting fails fast and the client retries; a JVM that exits ends the wait.
  try {
    const client = await proc.unlessExited(connectZk(connectString, readyTimeout));
    client.close();
  } catch (e) {
    const tail = proc.logTail();
    await proc.kill();
    const E = logShowsPortInUse(logFile, logStart) ? PortInUseError : Error;
    throw new E(`ZooKeeper on ${connectString} did not start: ${(e as Error).message}\n--- ${logFile} (tail)\n${tail}`);
  }
  return {
    connectString,
    port,
    dir,
    logFile,
    get pid() {
      return proc.pid;
    },
    stop: () => proc.stop(),
    kill: () => proc.kill(),
  };
}
