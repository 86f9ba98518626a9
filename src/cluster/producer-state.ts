/**
 * The producer-id allocator for InitProducerId (KIP-98). The per-partition producer state (epochs,
 * sequences, duplicates) belongs to the log it describes: src/log/producer-state.ts.
 */
import { allocateIds } from '../metadata/id-allocator.js';
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
}
