/**
 * One watch of the embedded store: the events of each committed revision that match its key or prefix are
 * queued and delivered on a microtask, in revision order, each revision whole in one `onEvents` call. A
 * listener that throws ends the watch (`LL_ERR_METADATA_WATCH_LISTENER`); a closing store ends it after what
 * is already queued.
 */

import type { StoredEvent } from './backend.js';
import { MetadataWatchListenerError } from './errors.js';
import { maybeKeyValue, toKeyValue } from './stored-rows.js';
import type { Watch, WatchEvent, WatchListener, WatchResponse, WatchTarget } from './types.js';

export class LocalWatch implements Watch {
  readonly id: number;
  readonly #listener: WatchListener;
  /** The key watched, for a single-key watch (the store indexes those by key). */
  readonly key: string | undefined;
  readonly #prefix: string | undefined;
  readonly #prevKv: boolean;
  readonly #startRevision: number;
  readonly #detach: (w: LocalWatch) => void;
  #queue: WatchResponse[] = [];
  #scheduled = false;
  #done = false;
  #endError: Error | null = null;

  constructor(
    id: number,
    target: WatchTarget,
    listener: WatchListener,
    prevKv: boolean,
    startRevision: number,
    detach: (w: LocalWatch) => void,
  ) {
    this.id = id;
    this.#listener = listener;
    this.key = 'key' in target ? target.key : undefined;
    this.#prefix = 'prefix' in target ? target.prefix : undefined;
    this.#prevKv = prevKv;
    this.#startRevision = startRevision;
    this.#detach = detach;
  }

  #matches(key: string): boolean {
    return this.key !== undefined ? key === this.key : key.startsWith(this.#prefix!);
  }

  /** Queue the matching events of one revision. */
  offer(revision: number, events: readonly StoredEvent[]): void {
    if (this.#done || this.#endError !== null || revision < this.#startRevision) return;
    const matching: WatchEvent[] = [];
    for (const e of events) {
      if (!this.#matches(e.kv.key)) continue;
      const kv = toKeyValue(e.kv, true);
      matching.push(this.#prevKv ? { type: e.type, kv, prevKv: maybeKeyValue(e.prev, true) } : { type: e.type, kv });
    }
    if (matching.length === 0) return;
    this.#queue.push({ revision, events: matching });
    this.#schedule();
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    queueMicrotask(() => this.#drain());
  }

  #drain(): void {
    this.#scheduled = false;
    while (!this.#done && this.#queue.length > 0) {
      const response = this.#queue.shift()!;
      try {
        this.#listener.onEvents(response);
      } catch (err) {
        this.#finish(new MetadataWatchListenerError(this.id, err));
        return;
      }
    }
    if (!this.#done && this.#endError !== null) this.#finish(this.#endError);
  }

  /** End with an error after delivering what is already queued (store closing). */
  endAfterQueued(error: Error): void {
    if (this.#done || this.#endError !== null) return;
    this.#endError = error;
    this.#detach(this);
    this.#schedule();
  }

  /** End now with an error, dropping what is queued. */
  #finish(error: Error): void {
    this.#done = true;
    this.#queue = [];
    this.#detach(this);
    const onError = this.#listener.onError;
    if (onError !== undefined) queueMicrotask(() => onError.call(this.#listener, error));
  }

  cancel(): Promise<void> {
    this.#done = true;
    this.#queue = [];
    this.#detach(this);
    return Promise.resolve();
  }
}
