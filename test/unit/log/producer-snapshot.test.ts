import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { crc32c } from '../../../protocol/crc32c.js';
import {
  CHUNK_PRODUCERS,
  PRODUCER_SNAPSHOT_VERSION,
  decodeProducerSnapshot,
  encodeProducerSnapshot,
} from '../../../src/log/producer-snapshot.js';
import { BATCHES_TO_RETAIN, PartitionProducerState, type BatchIdentity, type ProducerStateEntry } from '../../../src/log/producer-state.js';

const T0 = 1_700_000_000_000;

function producer(id: number, batches = 3): ProducerStateEntry {
  return {
    producerId: BigInt(id),
    epoch: id % 7,
    batches: Array.from({ length: batches }, (_, i) => ({
      firstSeq: i * 10,
      lastSeq: i * 10 + 9,
      baseOffset: id * 100 + i * 10,
      lastOffset: id * 100 + i * 10 + 9,
      timestamp: T0 + i,
    })),
    lastTimestamp: T0 + batches - 1,
    coordinatorEpoch: -1,
    currentTxnFirstOffset: -1,
  };
}

/** Rewrites a chunk's checksum after a test changed its bytes on purpose. */
function reseal(chunk: Buffer): Buffer {
  chunk.writeUInt32BE(crc32c(chunk.subarray(0, chunk.length - 4)), chunk.length - 4);
  return chunk;
}

describe('producer snapshots', () => {
  it('round-trips every producer field, across several chunks', () => {
    const producers = Array.from({ length: CHUNK_PRODUCERS + 5 }, (_, i) => producer(i, i % (BATCHES_TO_RETAIN + 1)));
    const offset = (CHUNK_PRODUCERS + 5) * 100;
    const chunks = encodeProducerSnapshot(offset, T0, producers);
    expect(chunks.length).toBe(2);
    const back = decodeProducerSnapshot(chunks, offset);
    if (typeof back === 'string') throw new Error(back);
    expect(back).toEqual({ offset, takenAtMs: T0, producers });
  });

  it('keeps the transaction fields (coordinator epoch, ongoing transaction first offset) reserved in version 1', () => {
    const p = { ...producer(9), coordinatorEpoch: 12, currentTxnFirstOffset: 905 };
    const back = decodeProducerSnapshot(encodeProducerSnapshot(1000, T0, [p]), 1000);
    if (typeof back === 'string') throw new Error(back);
    expect(back.producers).toEqual([p]);
  });

  it('keeps whatever sequences and epochs a producer sent, -1 included', () => {
    const odd: ProducerStateEntry = { ...producer(3, 1), epoch: -1, batches: [{ firstSeq: -1, lastSeq: 0x7fffffff, baseOffset: 0, lastOffset: 0, timestamp: -1 }], lastTimestamp: -1 };
    const back = decodeProducerSnapshot(encodeProducerSnapshot(1, T0, [odd]), 1);
    if (typeof back === 'string') throw new Error(back);
    expect(back.producers).toEqual([odd]);
  });

  it('writes one empty chunk when no producer is known, and reads it back', () => {
    const chunks = encodeProducerSnapshot(0, T0, []);
    expect(chunks.length).toBe(1);
    expect(decodeProducerSnapshot(chunks, 0)).toEqual({ offset: 0, takenAtMs: T0, producers: [] });
  });

  it('rejects a snapshot whose bytes changed, by its CRC32C', () => {
    const chunks = encodeProducerSnapshot(1000, T0, [producer(1), producer(2)]);
    chunks[0]![60] ^= 0x01;
    expect(decodeProducerSnapshot(chunks, 1000)).toBe('checksum mismatch');
  });

  it('rejects a version it does not know, a foreign magic and a snapshot at another offset', () => {
    const newer = encodeProducerSnapshot(1000, T0, [producer(1)]);
    newer[0]!.writeUInt16BE(PRODUCER_SNAPSHOT_VERSION + 1, 8);
    expect(decodeProducerSnapshot([reseal(newer[0]!)], 1000)).toBe(`unsupported version ${PRODUCER_SNAPSHOT_VERSION + 1}`);
    const foreign = encodeProducerSnapshot(1000, T0, [producer(1)]);
    foreign[0]!.write('LLLOGIDX', 0, 'latin1');
    expect(decodeProducerSnapshot(foreign, 1000)).toBe('bad magic');
    expect(decodeProducerSnapshot(encodeProducerSnapshot(1000, T0, [producer(1)]), 2000)).toMatch(/^snapshot at offset 1000/);
  });

  it('rejects counts and fields its bytes do not hold, without allocating for them', () => {
    const lying = encodeProducerSnapshot(1000, T0, [producer(1)]);
    lying[0]!.writeUInt32BE(0xffffffff, 12);
    expect(decodeProducerSnapshot([reseal(lying[0]!)], 1000)).toBe('producer past the end of its chunk');
    const tooManyBatches = encodeProducerSnapshot(1000, T0, [producer(1)]);
    tooManyBatches[0]!.writeUInt8(200, 48 + 10);
    expect(decodeProducerSnapshot([reseal(tooManyBatches[0]!)], 1000)).toMatch(/^bad producer/);
    const missingChunk = encodeProducerSnapshot(1000, T0, Array.from({ length: CHUNK_PRODUCERS + 1 }, (_, i) => producer(i, 0)));
    expect(decodeProducerSnapshot(missingChunk.slice(0, 1), 1000)).toBe('snapshot has 2 chunks, the ledger 1');
    expect(decodeProducerSnapshot([Buffer.alloc(10)], 1000)).toBe('chunk too short');
    // A batch at or past the snapshot's offset cannot be in it.
    expect(decodeProducerSnapshot(encodeProducerSnapshot(125, T0, [producer(1)]), 125)).toMatch(/^batch offsets out of range/);
  });
});

// ---------------------------------------------------------------------------------- snapshot + tail ≡ replay

interface StoredBatch {
  readonly id: BatchIdentity;
  readonly baseOffset: number;
  readonly lastOffset: number;
  readonly timestamp: number;
}

/**
 * What a log holds: batches of a few producers in offset order, each producer mostly in sequence, with
 * epoch bumps (sequence back to 0), gaps of unknown producers and non-idempotent batches between them.
 */
const storedLog = fc
  .array(
    fc.record({
      producer: fc.integer({ min: -1, max: 4 }),
      records: fc.integer({ min: 1, max: 5 }),
      bumpEpoch: fc.boolean(),
      jump: fc.integer({ min: 0, max: 3 }),
    }),
    { minLength: 0, maxLength: 60 },
  )
  .map((steps) => {
    const next = new Map<number, { epoch: number; seq: number }>();
    const out: StoredBatch[] = [];
    let offset = 0;
    for (const s of steps) {
      const p = next.get(s.producer) ?? { epoch: 0, seq: 0 };
      if (s.bumpEpoch && s.producer % 2 === 0) {
        p.epoch++;
        p.seq = 0;
      }
      const id: BatchIdentity =
        s.producer < 0
          ? { producerId: -1n, producerEpoch: -1, baseSequence: -1, lastOffsetDelta: s.records - 1 }
          : { producerId: BigInt(1000 + s.producer), producerEpoch: p.epoch, baseSequence: p.seq, lastOffsetDelta: s.records - 1 };
      p.seq += s.records;
      next.set(s.producer, p);
      offset += s.jump;
      out.push({ id, baseOffset: offset, lastOffset: offset + s.records - 1, timestamp: T0 + offset });
      offset += s.records;
    }
    return out;
  });

function applyAll(state: PartitionProducerState, batches: readonly StoredBatch[]): void {
  for (const b of batches) state.apply(b.id, b.baseOffset, b.lastOffset, b.timestamp);
}

describe('loading a snapshot and replaying the tail', () => {
  it('gives the state a replay of the whole log gives, wherever the snapshot was taken', () => {
    fc.assert(
      fc.property(storedLog, fc.nat(), (batches, cut) => {
        const at = batches.length === 0 ? 0 : cut % (batches.length + 1);
        const full = new PartitionProducerState();
        applyAll(full, batches);

        const before = new PartitionProducerState();
        applyAll(before, batches.slice(0, at));
        const offset = at === 0 ? 0 : batches[at - 1]!.lastOffset + 1;
        const decoded = decodeProducerSnapshot(encodeProducerSnapshot(offset, T0, before.entries()), offset);
        if (typeof decoded === 'string') throw new Error(decoded);
        const loaded = new PartitionProducerState();
        loaded.load(decoded.producers);
        applyAll(loaded, batches.slice(at));

        expect(loaded.entries()).toEqual(full.entries());
        // And they answer the next batch of every producer the same way.
        for (const e of full.entries()) {
          const last = e.batches[e.batches.length - 1];
          const retry: BatchIdentity = last
            ? { producerId: e.producerId, producerEpoch: e.epoch, baseSequence: last.firstSeq, lastOffsetDelta: last.lastSeq - last.firstSeq }
            : { producerId: e.producerId, producerEpoch: e.epoch, baseSequence: 0, lastOffsetDelta: 0 };
          expect(loaded.check(retry, T0).kind).toBe(full.check(retry, T0).kind);
        }
      }),
      { numRuns: 300 },
    );
  });
});
