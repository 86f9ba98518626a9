/**
 * What a classic-protocol operation builds while it runs: its records with their after-append callbacks (an
 * OpResult whose records the operation already applied, so they are not replayed), and the deferred responses
 * of parked JoinGroup and SyncGroup requests.
 */
import type { Responder } from './classic-group.js';
import type { CoordinatorRecord } from './records.js';
import type { OpResult } from './shard.js';

/** Records and after-append callbacks collected while an operation runs. */
export class Op {
  readonly records: CoordinatorRecord[] = [];
  private readonly callbacks: Array<(err: Error | null) => void> = [];

  add(record: CoordinatorRecord, onAppend?: (err: Error | null) => void): void {
    this.records.push(record);
    if (onAppend) this.callbacks.push(onAppend);
  }

  result<T>(response: T): OpResult<T> {
    const callbacks = this.callbacks;
    return {
      records: this.records,
      response,
      replay: false,
      onAppend: callbacks.length > 0 ? (err) => callbacks.forEach((cb) => cb(err)) : undefined,
    };
  }
}

export interface Deferred<T> {
  readonly promise: Promise<T>;
  readonly resolve: Responder<T>;
}

export function deferred<T>(): Deferred<T> {
  let resolve!: Responder<T>;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}
