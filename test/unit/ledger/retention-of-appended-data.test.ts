/**
 * Once an append is durable, the store keeps no reference to the bytes it was handed: an entry is often a
 * view of a whole request frame (a record batch inside a Produce of many partitions), so a reference kept
 * in the pending queue would pin the frame long after the request memory pool has released it.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { openMemoryLedgerStore } from '../../../src/ledger/local-store.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Collects until every ref is cleared, or gives up after `rounds`. */
async function collected(refs: WeakRef<object>[], rounds = 20): Promise<number> {
  for (let i = 0; i < rounds; i++) {
    gc();
    const alive = refs.filter((r) => r.deref() !== undefined).length;
    if (alive === 0) return 0;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return refs.filter((r) => r.deref() !== undefined).length;
}

describe('appended data', () => {
  it('is not retained by the store once its appends are durable (the frames they came from can be freed)', async () => {
    // No tail cache: what is left must be the store's own references.
    const store = await openMemoryLedgerStore({ cacheBytes: 0 });
    try {
      const w = await store.create();
      const frames: WeakRef<ArrayBuffer>[] = [];
      const appends: Promise<number>[] = [];
      // Built in a function of its own, so no frame stays in this suspended async function's registers.
      const appendViewOfFrame = (i: number): void => {
        const frame = Buffer.allocUnsafeSlow(1024 * 1024);
        frame.fill(i);
        frames.push(new WeakRef(frame.buffer));
        appends.push(w.append(frame.subarray(100, 200)));
      };
      for (let i = 0; i < 50; i++) appendViewOfFrame(i);
      expect(await Promise.all(appends)).toEqual(Array.from({ length: 50 }, (_, i) => i));
      expect(await collected(frames)).toBe(0);
      // The data is still there, read back from the store's own copy.
      const [e] = await store.read(w.ledgerId, 49, 49);
      expect(e!.data.length).toBe(100);
      expect(e!.data[0]).toBe(49);
    } finally {
      await store.close();
    }
  });
});
