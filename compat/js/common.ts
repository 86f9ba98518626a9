/**
 * What the Node.js scenario programs share (compat/README.md, "Scenarios"): payloads, the value
 * representation, bounded waits, and the outcome printed as one JSON line:
 * {"result": <observable outcome>, "violations": [<Kafka semantics the broker broke>]}.
 */
import { createHash } from 'node:crypto';

export const WAIT_MS = 15_000;
export const BIG = 1 << 20;

/** The suite's deterministic payload: byte i is i mod 251. */
export function pattern(n: number): Buffer {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = i % 251;
  return b;
}

/** null stays null; short printable ASCII stays text; anything else is "<len> bytes sha256:<16 hex>". */
export function repr(b: Buffer | string | null | undefined): string | null {
  if (b === null || b === undefined) return null;
  const buf = typeof b === 'string' ? Buffer.from(b) : b;
  if (buf.length <= 64 && buf.every((c) => c >= 0x20 && c < 0x7f)) return buf.toString('ascii');
  return `${buf.length} bytes sha256:${createHash('sha256').update(buf).digest('hex').slice(0, 16)}`;
}

export interface StandardRecord {
  key: Buffer | null;
  value: Buffer | null;
  headers: Array<[string, Buffer]>;
}

/** The five records of produce-consume, all to partition 0. */
export const STANDARD: StandardRecord[] = [
  { key: Buffer.from('k0'), value: Buffer.from('v0'), headers: [['h1', Buffer.from('a')]] },
  { key: null, value: Buffer.from('v1'), headers: [] },
  { key: Buffer.from('k2'), value: null, headers: [] },
  { key: Buffer.from('k3'), value: Buffer.alloc(0), headers: [['x', Buffer.from('1')], ['x', Buffer.from('2')]] },
  { key: Buffer.from('big'), value: pattern(BIG), headers: [['size', Buffer.from(String(BIG))]] },
];

export interface RecordRepr {
  p: number;
  o: number;
  k: string | null;
  v: string | null;
  h: Array<[string, string | null]>;
}

export function recordRepr(p: number, o: number, k: Buffer | null | undefined, v: Buffer | null | undefined, h: Array<[string, Buffer | null]>): RecordRepr {
  return { p, o, k: repr(k), v: repr(v), h: h.map(([hk, hv]) => [hk, repr(hv)]) };
}

export function standardRepr(i: number, headers?: Array<[string, Buffer]>): RecordRepr {
  const r = STANDARD[i];
  return recordRepr(0, i, r.key, r.value, headers ?? r.headers);
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls cond until it holds or the timeout passes; a throwing probe counts as "not yet". */
export async function waitFor(cond: () => boolean | Promise<boolean>, timeoutMs = WAIT_MS): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if (await cond()) return true;
    } catch {
      // not yet
    }
    await sleep(100);
  }
  try {
    return Boolean(await cond());
  } catch {
    return false;
  }
}

/** Rejects after ms; bounds a client call that has no timeout of its own. */
export function within<T>(p: Promise<T>, ms = WAIT_MS, what = 'operation'): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`${what} did not finish within ${ms} ms`), { name: 'Timeout' })), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

export class Run {
  readonly result: Record<string, unknown> = {};
  readonly violations: string[] = [];
  private readonly closers: Array<() => Promise<unknown>> = [];

  constructor(
    readonly bootstrap: string,
    readonly prefix: string,
    private readonly errName: (e: unknown) => string,
  ) {}

  check(ok: boolean, what: string): void {
    if (!ok) this.violations.push(what);
  }

  closing(close: () => Promise<unknown>): void {
    this.closers.unshift(close);
  }

  /** A step's value, "ok" when it has none, or {error: NAME} when it threw. */
  async attempt(f: () => Promise<unknown>): Promise<unknown> {
    try {
      const v = await f();
      return v === undefined || v === null ? 'ok' : v;
    } catch (e) {
      return { error: this.errName(e) };
    }
  }

  mine(names: Iterable<string>): string[] {
    return [...names].filter((n) => n.startsWith(this.prefix)).sort();
  }

  async finish(body: () => Promise<void>): Promise<void> {
    try {
      await body();
    } catch (e) {
      console.error(e);
      this.violations.push(`aborted: ${this.errName(e)}: ${String(e instanceof Error ? e.message : e).split('\n')[0]}`);
    }
    for (const close of this.closers) {
      try {
        await within(close(), 10_000, 'close');
      } catch {
        // closing after a failure may fail again; the outcome is already recorded
      }
    }
    process.stdout.write(JSON.stringify({ result: this.result, violations: this.violations }, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v)) + '\n');
  }
}

export type Scenario<R extends Run> = (r: R) => Promise<void>;

export function main<R extends Run>(scenarios: Record<string, Scenario<R>>, make: (bootstrap: string, prefix: string) => R): void {
  const [scenario, bootstrap, prefix] = process.argv.slice(2);
  if (!scenario || !bootstrap || !prefix) {
    console.error('usage: <program> <scenario> <bootstrap> <prefix>');
    process.exit(2);
  }
  const f = scenarios[scenario];
  if (!f) {
    console.error(`unknown scenario ${scenario}`);
    process.exit(2);
  }
  const r = make(bootstrap, prefix);
  r.finish(() => f(r)).then(
    () => process.exit(0),
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}

/**
 * The compaction scenario (compat/README.md; the Java program's Compaction.java says why these numbers):
 * batches of one record with a 200,000-byte `pad` header, five to a 1 MiB segment; keys k0..k3 over six
 * rounds, k1 deleted in round 3 and written again, k3 deleted in the last; six `roll` records after.
 */
export const COMPACTION = {
  pad: 200_000,
  topicConfigs: {
    'cleanup.policy': 'compact',
    'delete.retention.ms': '86400000',
    'min.cleanable.dirty.ratio': '0.01',
    'min.compaction.lag.ms': '0',
    'segment.bytes': '1048576',
    'segment.ms': '604800000',
  } as Record<string, string>,
  /** Bounds of the wait for the cleaner: its first removal, then a surviving set unchanged this long. */
  firstShrinkMs: 45_000,
  stableMs: 5_000,
  workload(): Array<{ key: string; value: string | null }> {
    const w: Array<{ key: string; value: string | null }> = [];
    for (let round = 0; round < 6; round++) {
      for (let k = 0; k < 4; k++) w.push({ key: `k${k}`, value: (k === 1 && round === 3) || (k === 3 && round === 5) ? null : `k${k}-r${round}` });
    }
    for (let i = 0; i < 6; i++) w.push({ key: 'roll', value: `roll-${i}` });
    return w;
  },
  /**
   * Kafka's guarantees for a compacted log, whatever the segment boundaries: a survivor ("<offset> <key>
   * <value>") is what was produced at its offset, and the latest record of every key survives (tombstones
   * too, within delete.retention.ms).
   */
  check(survivors: string[], work: Array<{ key: string; value: string | null }>): string[] {
    const out: string[] = [];
    const line = (o: number): string => `${o} ${work[o]!.key} ${work[o]!.value}`;
    for (const s of survivors) {
      const o = Number(s.split(' ', 1)[0]);
      if (!(o < work.length) || s !== line(o)) out.push(`offset ${o} holds ${s.slice(s.indexOf(' ') + 1)}, not what was produced there`);
    }
    const latest = new Map<string, number>();
    work.forEach((r, i) => latest.set(r.key, i));
    for (const [key, o] of latest) if (!survivors.includes(line(o))) out.push(`the latest record of ${key} (offset ${o}) is gone`);
    return out;
  },
};
