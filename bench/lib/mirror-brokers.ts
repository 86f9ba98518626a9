/**
 * The two Ledgerline brokers of the mirror benchmark (bench/mirror.ts), started from dist/ as `compare` starts
 * Ledgerline (compat/lib/brokers.ts: one node, ephemeral loopback ports, a fresh data directory under the
 * harness's temp directory), plus the destination's admin endpoint (cluster links and mirror topics,
 * src/replication/admin-routes.ts):
 *
 *   source        the topics the load generator writes
 *   destination   ledgerline.admin.listener=http://127.0.0.1:0; its links point at the source, its mirror topics
 *                 copy the source's
 *
 * Each broker reports its CPU seconds (/proc/<pid>/stat) and peak RSS (VmHWM) at any time, not only when it stops.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Ledgerline } from '../../compat/lib/brokers.js';
import { cpuSeconds, installExitHooks, peakRssMiB } from '../../compat/lib/proc.js';
import { dataRoot, ensureBuild } from './brokers.js';
import { RESULTS_DIR } from './workload.js';

export type MirrorRole = 'source' | 'destination';

export interface MirrorNode {
  readonly role: MirrorRole;
  readonly bootstrap: string;
  /** The destination's admin endpoint; null on the source. */
  readonly adminUrl: string | null;
  readonly startupMs: number;
  readonly logFile: string;
  cpuSeconds(): number | null;
  peakRssMiB(): Promise<number | null>;
  /** Why the process is gone, or null while it runs. */
  exited(): string | null;
  stop(): Promise<{ peakRssMiB: number | null }>;
}

export interface MirrorPair {
  readonly source: MirrorNode;
  readonly destination: MirrorNode;
  stop(): Promise<{ source: number | null; destination: number | null }>;
}

let hooks = false;

/** The admin endpoint's URL, from the broker's log line `admin HTTP endpoint listening` (JSON lines: stdout is a file). */
async function adminUrlFrom(logFile: string, timeoutMs = 15_000): Promise<string> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (existsSync(logFile)) {
      for (const line of readFileSync(logFile, 'utf8').split('\n')) {
        if (!line.includes('admin HTTP endpoint listening')) continue;
        try {
          const url = (JSON.parse(line) as { url?: unknown }).url;
          if (typeof url === 'string') return url;
        } catch {
          // a line cut while being written: read again
        }
      }
    }
    if (performance.now() > deadline) throw new Error(`the destination did not log its admin endpoint within ${timeoutMs / 1000} s (${logFile})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function startNode(role: MirrorRole, logDir: string, log: (l: string) => void, env?: Record<string, string>): Promise<MirrorNode> {
  const settings: Record<string, string> = role === 'destination' ? { 'ledgerline.admin.listener': 'http://127.0.0.1:0' } : {};
  const broker = new Ledgerline({ logDir: join(logDir, role), keepData: false, readyTimeoutMs: 60_000, build: false, settings });
  // The child inherits this process's environment when it is spawned (during start()).
  const saved: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(env ?? {})) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
  let report;
  try {
    report = await broker.start();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
  if (!report.ok) {
    await broker.stop().catch(() => undefined);
    throw new Error(`the ${role} broker did not start: ${report.reason ?? 'unknown reason'} (log: ${broker.logFile})`);
  }
  const pid = broker.pids()[0];
  let adminUrl: string | null = null;
  if (role === 'destination') {
    try {
      adminUrl = await adminUrlFrom(broker.logFile);
    } catch (e) {
      await broker.stop().catch(() => undefined);
      throw e;
    }
  }
  log(`${role} serving at ${broker.bootstrap}${adminUrl ? `, admin ${adminUrl}` : ''} after ${(report.startupMs / 1000).toFixed(1)} s`);
  return {
    role,
    bootstrap: broker.bootstrap,
    adminUrl,
    startupMs: report.startupMs,
    logFile: broker.logFile,
    cpuSeconds: () => cpuSeconds(pid),
    peakRssMiB: () => peakRssMiB(pid),
    exited: () => broker.exited(),
    stop: () => broker.stop(),
  };
}

/**
 * Starts a fresh source and destination, one after the other, so that each one's extra environment (NODE_OPTIONS
 * for a CPU profile) reaches that broker only. Logs go to `bench/results/logs/mirror-<time>/<role>/`.
 */
export async function startMirrorPair(o: { log: (l: string) => void; sourceEnv?: Record<string, string>; destinationEnv?: Record<string, string> }): Promise<MirrorPair> {
  if (!hooks) {
    installExitHooks();
    hooks = true;
  }
  dataRoot();
  await ensureBuild(o.log);
  const logDir = join(RESULTS_DIR, 'logs', `mirror-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  const source = await startNode('source', logDir, o.log, o.sourceEnv);
  let destination: MirrorNode;
  try {
    destination = await startNode('destination', logDir, o.log, o.destinationEnv);
  } catch (e) {
    await source.stop().catch(() => undefined);
    throw e;
  }
  return {
    source,
    destination,
    async stop() {
      const [s, d] = await Promise.all([source.stop(), destination.stop()]);
      return { source: s.peakRssMiB, destination: d.peakRssMiB };
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// The destination's admin endpoint

export async function admin<T = unknown>(url: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: T }> {
  const res = await fetch(`${url}${path}`, {
    method,
    ...(body !== undefined ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, json: (text === '' ? undefined : JSON.parse(text)) as T };
}

/** PUT /v1/links/<name> to the source; throws with the endpoint's answer when it is not 200. */
export async function putLink(adminUrl: string, name: string, bootstrapServers: string): Promise<void> {
  const r = await admin<{ error?: string }>(adminUrl, 'PUT', `/v1/links/${encodeURIComponent(name)}`, { bootstrapServers });
  if (r.status !== 200) throw new Error(`PUT /v1/links/${name} answered ${r.status}: ${r.json?.error ?? JSON.stringify(r.json)}`);
}

/** POST /v1/mirrors; throws with the endpoint's answer when it is not 201. */
export async function createMirror(adminUrl: string, topic: string, link: string): Promise<void> {
  const r = await admin<{ error?: string }>(adminUrl, 'POST', '/v1/mirrors', { topic, link });
  if (r.status !== 201) throw new Error(`POST /v1/mirrors ${topic} answered ${r.status}: ${r.json?.error ?? JSON.stringify(r.json)}`);
}

export interface MirrorPartitionStatus {
  partition: number;
  position: number;
  sourceHighWatermark: number;
  lag: number;
  error: string | null;
}

/** GET /v1/mirrors/<topic>: the partitions the destination copies (empty until its replicator has seen them). */
export async function mirrorPartitions(adminUrl: string, topic: string): Promise<MirrorPartitionStatus[]> {
  const r = await admin<{ partitions?: MirrorPartitionStatus[]; error?: string }>(adminUrl, 'GET', `/v1/mirrors/${encodeURIComponent(topic)}`);
  if (r.status !== 200) throw new Error(`GET /v1/mirrors/${topic} answered ${r.status}: ${r.json?.error ?? ''}`);
  return r.json.partitions ?? [];
}

/**
 * Waits until the destination's replicator copies all `partitions` of `topic` and has fetched each once from the
 * source (sourceHighWatermark ≥ 0): mirroring is live.
 */
export async function waitMirrorLive(adminUrl: string, topic: string, partitions: number, timeoutMs = 60_000): Promise<number> {
  const t0 = performance.now();
  let last: MirrorPartitionStatus[] = [];
  for (;;) {
    last = await mirrorPartitions(adminUrl, topic).catch(() => last);
    if (last.length >= partitions && last.every((p) => p.sourceHighWatermark >= 0 && p.error === null)) return performance.now() - t0;
    if (performance.now() - t0 > timeoutMs) {
      const errs = [...new Set(last.map((p) => p.error).filter((e) => e !== null))];
      throw new Error(`mirror ${topic}: ${last.length} of ${partitions} partitions live after ${timeoutMs / 1000} s${errs.length > 0 ? ` (${errs.join('; ')})` : ''}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}
