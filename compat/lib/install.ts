/**
 * Installs everything the selected clients and brokers need, from the registries only, into
 * compat/.work/ (git-ignored): Maven artifacts and the JVM classpaths, a Python venv, the Go
 * programs, and kcat from Debian. A step whose inputs did not change since it last succeeded is skipped
 * (a stamp holds the hash of its inputs), so a second run on the same machine starts at once.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { BIN_DIR, COMPAT_DIR, GO_DIR, M2_DIR, REPO_DIR, VENV_DIR, WORK_DIR } from './paths.js';
import { lastLine, run } from './proc.js';

export type StepId = 'maven' | 'python' | 'go' | 'kcat' | 'node';

export interface StepReport {
  step: StepId;
  ok: boolean;
  skipped: boolean;
  ms: number;
  reason?: string;
}

async function filesUnder(dir: string, exts: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  if (!existsSync(dir)) return out;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const full = join(entry.parentPath, entry.name);
    if (full.includes('/target/') || full.includes('/.work/')) continue;
    if (exts.some((e) => entry.name.endsWith(e))) out.push(full);
  }
  return out.sort();
}

async function hashFiles(files: readonly string[], extra = ''): Promise<string> {
  const h = createHash('sha256');
  h.update(extra);
  for (const f of files) {
    h.update(f);
    h.update(await readFile(f));
  }
  return h.digest('hex');
}

const stampPath = (step: StepId): string => join(WORK_DIR, 'stamps', `${step}.sha256`);

async function stampMatches(step: StepId, hash: string, outputs: readonly string[]): Promise<boolean> {
  if (!outputs.every((o) => existsSync(o))) return false;
  try {
    return (await readFile(stampPath(step), 'utf8')).trim() === hash;
  } catch {
    return false;
  }
}

async function writeStamp(step: StepId, hash: string): Promise<void> {
  await mkdir(join(WORK_DIR, 'stamps'), { recursive: true });
  await writeFile(stampPath(step), hash + '\n');
}

function failure(step: StepId, t0: number, what: string, r: { stdout: string; stderr: string; timedOut: boolean; spawnError?: string }): StepReport {
  const why = r.spawnError ?? (r.timedOut ? 'timed out' : lastLine(r.stderr) || lastLine(r.stdout) || 'failed');
  return { step, ok: false, skipped: false, ms: Date.now() - t0, reason: `${what}: ${why}` };
}

async function maven(force: boolean): Promise<StepReport> {
  const t0 = Date.now();
  const outputs = ['kafka-broker', 'java', 'kafka-tools', 'streams', 'java-e2e', 'connect', 'bookkeeper'].map((m) => join(COMPAT_DIR, m, 'target', 'classpath.txt'));
  const inputs = [
    join(COMPAT_DIR, 'pom.xml'),
    ...(await filesUnder(join(COMPAT_DIR, 'kafka-broker'), ['.xml'])),
    ...(await filesUnder(join(COMPAT_DIR, 'java'), ['.xml', '.java'])),
    ...(await filesUnder(join(COMPAT_DIR, 'kafka-tools'), ['.xml', '.java'])),
    ...(await filesUnder(join(COMPAT_DIR, 'streams'), ['.xml', '.java'])),
    ...(await filesUnder(join(COMPAT_DIR, 'java-e2e'), ['.xml', '.java'])),
    ...(await filesUnder(join(COMPAT_DIR, 'connect'), ['.xml'])),
    ...(await filesUnder(join(COMPAT_DIR, 'bookkeeper'), ['.xml', '.java'])),
  ];
  const hash = await hashFiles(inputs);
  if (!force && (await stampMatches('maven', hash, outputs))) return { step: 'maven', ok: true, skipped: true, ms: Date.now() - t0 };
  const r = await run('mvn', ['-B', '-q', `-Dmaven.repo.local=${M2_DIR}`, '-f', join(COMPAT_DIR, 'pom.xml'), 'package'], { cwd: COMPAT_DIR, timeoutMs: 600_000 });
  if (r.code !== 0) return failure('maven', t0, 'mvn package', r);
  await writeStamp('maven', hash);
  return { step: 'maven', ok: true, skipped: false, ms: Date.now() - t0 };
}

async function python(force: boolean): Promise<StepReport> {
  const t0 = Date.now();
  const req = join(COMPAT_DIR, 'python', 'requirements.txt');
  const py = join(VENV_DIR, 'bin', 'python');
  const hash = await hashFiles([req]);
  if (!force && (await stampMatches('python', hash, [py]))) return { step: 'python', ok: true, skipped: true, ms: Date.now() - t0 };
  // The python3 on PATH (pyenv's on these machines), never Debian's /usr/bin/python3.
  if (!existsSync(py)) {
    const venv = await run('python3', ['-m', 'venv', VENV_DIR], { timeoutMs: 120_000 });
    if (venv.code !== 0) return failure('python', t0, 'python3 -m venv', venv);
  }
  const pip = await run(py, ['-m', 'pip', 'install', '-q', '--disable-pip-version-check', '--cache-dir', join(WORK_DIR, 'pip-cache'), '-r', req], {
    timeoutMs: 600_000,
  });
  if (pip.code !== 0) return failure('python', t0, 'pip install', pip);
  await writeStamp('python', hash);
  return { step: 'python', ok: true, skipped: false, ms: Date.now() - t0 };
}

export function goEnv(): NodeJS.ProcessEnv {
  return {
    ...process.env,
    GOMODCACHE: join(GO_DIR, 'mod'),
    GOCACHE: join(GO_DIR, 'cache'),
    GOPATH: join(GO_DIR, 'path'),
    GOFLAGS: '-modcacherw -mod=readonly -buildvcs=false',
    GOTOOLCHAIN: 'local',
  };
}

async function go(): Promise<StepReport> {
  const t0 = Date.now();
  // go build is incremental on its own (its cache is in compat/.work/go/cache).
  const r = await run('go', ['build', '-o', BIN_DIR + '/', './franz', './sarama', './e2etool', './e2ebench'], { cwd: join(COMPAT_DIR, 'go'), env: goEnv(), timeoutMs: 600_000 });
  if (r.code !== 0) return failure('go', t0, 'go build', r);
  return { step: 'go', ok: true, skipped: false, ms: Date.now() - t0 };
}

async function kcat(): Promise<StepReport> {
  const t0 = Date.now();
  const which = await run('sh', ['-c', 'command -v kcat'], { timeoutMs: 10_000 });
  if (which.code === 0) return { step: 'kcat', ok: true, skipped: true, ms: Date.now() - t0 };
  if (process.getuid?.() !== 0) return { step: 'kcat', ok: false, skipped: false, ms: 0, reason: 'kcat is not installed and apt-get needs root' };
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const update = await run('apt-get', ['update', '-qq'], { env, timeoutMs: 300_000 });
  if (update.code !== 0) return failure('kcat', t0, 'apt-get update', update);
  const install = await run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'kcat'], { env, timeoutMs: 300_000 });
  if (install.code !== 0) return failure('kcat', t0, 'apt-get install kcat', install);
  return { step: 'kcat', ok: true, skipped: false, ms: Date.now() - t0 };
}

async function node(): Promise<StepReport> {
  const t0 = Date.now();
  const require = createRequire(join(REPO_DIR, 'package.json'));
  const missing: string[] = [];
  for (const pkg of ['kafkajs', '@platformatic/kafka', 'snappyjs', 'lz4-napi', '@mongodb-js/zstd']) {
    try {
      require.resolve(pkg);
    } catch {
      missing.push(pkg);
    }
  }
  if (missing.length > 0) return { step: 'node', ok: false, skipped: false, ms: Date.now() - t0, reason: `npm packages missing (run npm ci): ${missing.join(', ')}` };
  return { step: 'node', ok: true, skipped: true, ms: Date.now() - t0 };
}

/** Runs the needed steps concurrently (they are mostly downloads); returns one report per step. */
export async function install(steps: ReadonlySet<StepId>, force: boolean, log: (line: string) => void): Promise<Map<StepId, StepReport>> {
  await mkdir(BIN_DIR, { recursive: true });
  const jobs: Array<Promise<StepReport>> = [];
  const start = (id: StepId, f: () => Promise<StepReport>): void => {
    if (!steps.has(id)) return;
    jobs.push(
      f()
        .catch((e: unknown): StepReport => ({ step: id, ok: false, skipped: false, ms: 0, reason: e instanceof Error ? e.message : String(e) }))
        .then((r) => {
          log(`install ${r.step}: ${r.ok ? (r.skipped ? 'up to date' : 'done') : `FAILED (${r.reason})`} in ${(r.ms / 1000).toFixed(1)} s`);
          return r;
        }),
    );
  };
  start('maven', () => maven(force));
  start('python', () => python(force));
  start('go', go);
  start('kcat', kcat);
  start('node', node);
  const reports = await Promise.all(jobs);
  return new Map(reports.map((r) => [r.step, r]));
}
