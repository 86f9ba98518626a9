/**
 * A standalone ZooKeeper 3.9 server on 127.0.0.1 (ZooKeeperServerMain with a zoo.cfg in its directory):
 * the metadata service of the development cluster. Ready once a session can be opened.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:net';
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
  const readyTimeout = opts.readyTimeoutMs ?? 60_000;
  const deadline = Date.now() + readyTimeout;
  // ZooKeeper binds its port before its database is loaded and closes the sessions asked for meanwhile
  // ("ZooKeeperServer not running"), after which node-zookeeper-client may not come back within the deadline on a
  // loaded machine: wait for `srvr` to report a serving mode first, then open a session. A JVM that exits ends
  // the wait.
  try {
    await proc.unlessExited(waitUntilServing(port, deadline));
    const client = await proc.unlessExited(connectZk(connectString, Math.max(1_000, deadline - Date.now())));
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

/** The answer to a four-letter word (`srvr`), or '' when the port does not answer. */
function fourLetterWord(port: number, word: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    let answer = '';
    const done = (): void => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(2_000, done);
    socket.on('connect', () => socket.write(word));
    socket.on('data', (chunk: Buffer) => {
      if (answer.length < 64 * 1024) answer += chunk.toString('utf8');
    });
    socket.on('end', done);
    socket.on('error', done);
  });
}

/** Resolves once ZooKeeper reports a mode (standalone, leader, follower): its database is loaded and it serves. */
async function waitUntilServing(port: number, deadline: number): Promise<void> {
  let last = '';
  while (Date.now() < deadline) {
    last = await fourLetterWord(port, 'srvr');
    if (/^Mode: /m.test(last)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`ZooKeeper on 127.0.0.1:${port} did not report a serving mode (srvr: ${JSON.stringify(last.slice(0, 200))})`);
}
