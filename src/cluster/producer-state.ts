/**
 * The producer-id allocator for InitProducerId (KIP-98). The per-partition producer state (epochs,
 * sequences, duplicates) belongs to the log it describes: src/log/producer-state.ts.
 */
import { allocateIds, reserveIdsThrough } from '../metadata/id-allocator.js';
import { idCounterKey } from '../metadata/layout.js';
import type { MetadataStore } from '../metadata/types.js';

/** How many producer ids one metadata write reserves. */
const PRODUCER_ID_BLOCK = 1000;

/**
 * Producer ids for InitProducerId. Ids come from a counter in the metadata store, reserved in blocks so
 * that a restart never hands out an id twice (the rest of a block is skipped); epochs start at 0.
 */
export class ProducerIdAllocator {
  private next = 0;
  private end = 0;
  private pending: Promise<void> | null = null;

  constructor(private readonly store: MetadataStore) {}

  async allocate(): Promise<bigint> {
    while (this.next >= this.end) {
      this.pending ??= allocateIds(this.store, idCounterKey('producer-id'), PRODUCER_ID_BLOCK).then(
        (block) => {
          this.next = block.first;
          this.end = block.first + block.count;
          this.pending = null;
        },
        (e: unknown) => {
          this.pending = null;
          throw e;
        },
      );
      await this.pending;
    }
    return BigInt(this.next++);
  }

  /**
   * No id up to `producerId` is handed out from now on, here or by a broker that allocates its next block: a
   * promoted mirror topic keeps the producer states of its source cluster's producers, whose ids this cluster
   * must not give to its own (a new producer would meet an old one's sequence numbers). A block another broker
   * of a shared cluster holds already is not reached (src/replication/README.md).
   */
  async reserveThrough(producerId: bigint): Promise<void> {
    if (producerId < 0n || producerId > BigInt(Number.MAX_SAFE_INTEGER - 1)) return;
    const id = Number(producerId);
    await reserveIdsThrough(this.store, idCounterKey('producer-id'), id);
    if (this.next <= id) this.next = Math.min(id + 1, this.end);
  }
}
