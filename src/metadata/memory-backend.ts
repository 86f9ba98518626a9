/**
 * In-memory storage engine. A MemoryMetadataVolume plays the part of the data directory: a store opened on
 * it, closed, and opened again finds what was committed, which lets tests of upper layers restart a broker
 * without a disk. Nothing survives the process.
 *
 *   MemoryMetadataVolume
 *   ├─ kvs     Map key → StoredKv      plus `order`: the keys sorted by UTF-8 bytes (binary search)
 *   ├─ events  StoredEvent[]           ascending (revision, seq); compaction drops a head
 *   ├─ keyEvents Map key → StoredEvent[]   the same events by key, each list ascending (a watch's replay)
 *   ├─ leases  Map id → ttl
 *   └─ meta    revision · compactRevision · nextLeaseId
 *
 * Atomicity: each write inside `atomically` records its inverse; a throw replays them backwards.
 * Values are copied in and out, so no caller can change stored bytes through a Buffer it holds.
 */

import type { EventTarget, MetaName, PersistedState, StorageBackend, StoredEvent, StoredKv, StoredLease } from './backend.js';
import { MetadataLockedError } from './errors.js';
import { compareKeys } from './key-order.js';

function copyKv(kv: StoredKv): StoredKv {
  return { ...kv, value: Buffer.from(kv.value) };
}

function copyEvent(e: StoredEvent): StoredEvent {
  return { ...e, kv: copyKv(e.kv), prev: e.prev === null ? null : copyKv(e.prev) };
}

/** Index of the first event of `events` (ascending by revision) at or after `revision`. */
function firstAtOrAfter(events: readonly StoredEvent[], revision: number): number {
  let lo = 0;
  let hi = events.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (events[mid]!.revision < revision) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Where a memory store's state lives between a close and the next open. */
export class MemoryMetadataVolume {
  readonly kvs = new Map<string, StoredKv>();
  readonly order: string[] = [];
  events: StoredEvent[] = [];
  /** `events` by key: the same objects, each list in (revision, seq) order. */
  readonly keyEvents = new Map<string, StoredEvent[]>();
  readonly leases = new Map<number, number>();
  readonly meta: Record<MetaName, number> = { revision: 1, compactRevision: 0, nextLeaseId: 1 };
  inUse = false;
  readonly name: string;

  constructor(name = 'memory') {
    this.name = name;
  }

  /** Index of the first key in `order` that sorts at or after `key`. */
  lowerBound(key: string): number {
    let lo = 0;
    let hi = this.order.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareKeys(this.order[mid]!, key) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

export class MemoryBackend implements StorageBackend {
  readonly #volume: MemoryMetadataVolume;
  #undo: Array<() => void> | null = null;
  #closed = false;

  constructor(volume: MemoryMetadataVolume) {
    if (volume.inUse) throw new MetadataLockedError(volume.name);
    volume.inUse = true;
    this.#volume = volume;
  }

  get location(): string {
    return this.#volume.name;
  }

  load(): PersistedState {
    const v = this.#volume;
    return {
      revision: v.meta.revision,
      compactRevision: v.meta.compactRevision,
      nextLeaseId: v.meta.nextLeaseId,
      leases: [...v.leases].map(([id, ttl]) => ({ id, ttl })).sort((a, b) => a.id - b.id),
    };
  }

  atomically<T>(fn: () => T): T {
    // Nested calls are savepoints (as SQLite's): an inner throw undoes the inner writes only; an inner
    // success hands its inverses to the outer call, which a later throw replays too.
    const outer = this.#undo;
    const undo: Array<() => void> = [];
    this.#undo = undo;
    try {
      const result = fn();
      if (outer !== null) for (const u of undo) outer.push(u);
      return result;
    } catch (err) {
      for (let i = undo.length - 1; i >= 0; i--) undo[i]!();
      throw err;
    } finally {
      this.#undo = outer;
    }
  }

  #record(inverse: () => void): void {
    this.#undo?.push(inverse);
  }

  getKv(key: string): StoredKv | undefined {
    const kv = this.#volume.kvs.get(key);
    return kv === undefined ? undefined : copyKv(kv);
  }

  rangeKvs(prefix: string, startAfter: string | undefined, limit: number | undefined): StoredKv[] {
    const v = this.#volume;
    let i = v.lowerBound(prefix);
    if (startAfter !== undefined && compareKeys(startAfter, prefix) >= 0) {
      i = v.lowerBound(startAfter);
      if (v.order[i] === startAfter) i++;
    }
    const out: StoredKv[] = [];
    for (; i < v.order.length && (limit === undefined || out.length < limit); i++) {
      const key = v.order[i]!;
      // For well-formed strings, a string prefix is exactly a UTF-8 byte prefix.
      if (!key.startsWith(prefix)) break;
      out.push(copyKv(v.kvs.get(key)!));
    }
    return out;
  }

  keysWithLease(lease: number): string[] {
    return this.#volume.order.filter((k) => this.#volume.kvs.get(k)!.lease === lease);
  }

  putKv(kv: StoredKv): void {
    const v = this.#volume;
    const previous = v.kvs.get(kv.key);
    v.kvs.set(kv.key, copyKv(kv));
    if (previous === undefined) {
      const at = v.lowerBound(kv.key);
      v.order.splice(at, 0, kv.key);
      this.#record(() => {
        v.kvs.delete(kv.key);
        v.order.splice(v.lowerBound(kv.key), 1);
      });
    } else {
      this.#record(() => v.kvs.set(kv.key, previous));
    }
  }

  deleteKv(key: string): void {
    const v = this.#volume;
    const previous = v.kvs.get(key);
    if (previous === undefined) return;
    v.kvs.delete(key);
    v.order.splice(v.lowerBound(key), 1);
    this.#record(() => {
      v.kvs.set(key, previous);
      v.order.splice(v.lowerBound(key), 0, key);
    });
  }

  appendEvents(events: readonly StoredEvent[]): void {
    const v = this.#volume;
    const before = v.events.length;
    for (const e of events) {
      const stored = copyEvent(e);
      v.events.push(stored);
      let list = v.keyEvents.get(stored.kv.key);
      if (list === undefined) v.keyEvents.set(stored.kv.key, (list = []));
      list.push(stored);
    }
    this.#record(() => {
      for (const e of v.events.splice(before)) {
        const list = v.keyEvents.get(e.kv.key)!;
        list.pop();
        if (list.length === 0) v.keyEvents.delete(e.kv.key);
      }
    });
  }

  readEvents(fromRevision: number, target?: EventTarget): StoredEvent[] {
    const v = this.#volume;
    if (target !== undefined && 'key' in target) {
      const list = v.keyEvents.get(target.key);
      return list === undefined ? [] : list.slice(firstAtOrAfter(list, fromRevision)).map(copyEvent);
    }
    const tail = v.events.slice(firstAtOrAfter(v.events, fromRevision));
    // For well-formed strings, a string prefix is exactly a UTF-8 byte prefix.
    const prefix = target?.prefix ?? '';
    return (prefix === '' ? tail : tail.filter((e) => e.kv.key.startsWith(prefix))).map(copyEvent);
  }

  compactEvents(beforeRevision: number): void {
    const v = this.#volume;
    const previous = v.events;
    const cut = firstAtOrAfter(previous, beforeRevision);
    if (cut === 0) return;
    v.events = previous.slice(cut);
    // The dropped events are the oldest of each of their keys: drop as many from the head of each list.
    const dropped = new Map<string, number>();
    for (let i = 0; i < cut; i++) {
      const key = previous[i]!.kv.key;
      dropped.set(key, (dropped.get(key) ?? 0) + 1);
    }
    const heads = new Map<string, StoredEvent[]>();
    for (const [key, count] of dropped) {
      const list = v.keyEvents.get(key)!;
      heads.set(key, list.splice(0, count));
      if (list.length === 0) v.keyEvents.delete(key);
    }
    this.#record(() => {
      v.events = previous;
      for (const [key, head] of heads) {
        const list = v.keyEvents.get(key);
        if (list === undefined) v.keyEvents.set(key, head);
        else list.unshift(...head);
      }
    });
  }

  putLease(lease: StoredLease): void {
    const v = this.#volume;
    const previous = v.leases.get(lease.id);
    v.leases.set(lease.id, lease.ttl);
    this.#record(() => {
      if (previous === undefined) v.leases.delete(lease.id);
      else v.leases.set(lease.id, previous);
    });
  }

  deleteLease(id: number): void {
    const v = this.#volume;
    const previous = v.leases.get(id);
    if (previous === undefined) return;
    v.leases.delete(id);
    this.#record(() => v.leases.set(id, previous));
  }

  setMeta(name: MetaName, value: number): void {
    const v = this.#volume;
    const previous = v.meta[name];
    v.meta[name] = value;
    this.#record(() => {
      v.meta[name] = previous;
    });
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#volume.inUse = false;
  }
}
