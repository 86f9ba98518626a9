/**
 * A real Apache ZooKeeper server for the ZooKeeper tests, with the development-cluster launcher's API
 * (compat/cluster/index.ts: bookKeeperClasspath, requireBookKeeper, startZooKeeper). It stands in for the
 * launcher until that is on this branch: the server's classpath comes from LEDGERLINE_ZOOKEEPER_CLASSPATH
 * (ZooKeeper 3.9.5's jars and their dependencies); without it the tests skip, unless
 * LEDGERLINE_REQUIRE_BOOKKEEPER=1 makes them fail.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function bookKeeperClasspath(): string | undefined {
  const cp = process.env.LEDGERLINE_ZOOKEEPER_CLASSPATH;
  return cp && cp.trim() !== '' ? cp.trim() : undefined;
}

export function requireBookKeeper(): boolean {
  return process.env.LEDGERLINE_REQUIRE_BOOKKEEPER === '1';
}

export interface ZooKeeperProcess {
  readonly connectString: string;
  readonly port: number;
  readonly dir: string;
  stop(): Promise<void>;
  kill(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** True once the server serves requests (`srvr` answers with its stats; "ruok" answers before that). */
async function serving(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let reply = '';
    socket.setTimeout(1_000, () => socket.destroy());
    socket.on('connect', () => socket.write('srvr'));
    socket.on('data', (d) => (reply += d.toString()));
    socket.on('error', () => resolve(false));
    socket.on('close', () => resolve(reply.startsWith('Zookeeper version')));
  });
}

export async function startZooKeeper(
  opts: { dir?: string; port?: number; tickTimeMs?: number; maxSessionTimeoutMs?: number } = {},
): Promise<ZooKeeperProcess> {
  const classpath = bookKeeperClasspath();
  if (!classpath) throw new Error('ZooKeeper is not available: set LEDGERLINE_ZOOKEEPER_CLASSPATH');
  const ownsDir = opts.dir === undefined;
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'll-zookeeper-'));
  const port = opts.port ?? (await freePort());
  const tick = opts.tickTimeMs ?? 500;
  const child: ChildProcess = spawn(
    'java',
    [
      '-Xmx256m',
      '-Dzookeeper.admin.enableServer=false',
      '-Dzookeeper.4lw.commands.whitelist=srvr',
      `-Dzookeeper.maxSessionTimeout=${opts.maxSessionTimeoutMs ?? 40_000}`,
      '-cp',
      classpath,
      'org.apache.zookeeper.server.ZooKeeperServerMain',
      String(port),
      dir,
      String(tick),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (d) => (stderr = (stderr + d.toString()).slice(-4_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const onParentExit = (): void => void child.kill('SIGKILL');
  process.once('exit', onParentExit);
  const deadline = Date.now() + 30_000;
  while (!(await serving(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`ZooKeeper did not start on port ${port}: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const end = async (signal: NodeJS.Signals): Promise<void> => {
    process.removeListener('exit', onParentExit);
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
    if (ownsDir) rmSync(dir, { recursive: true, force: true });
  };
  return { connectString: `127.0.0.1:${port}`, port, dir, stop: () => end('SIGTERM'), kill: () => end('SIGKILL') };
}
