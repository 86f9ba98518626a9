import { describe, expect, it } from 'vitest';
import { CHUNK_BATCHES, decodeIndexSnapshot, encodeIndexSnapshot } from '../../../src/log/index-snapshot.js';
import { IndexedLedger } from '../../../src/log/offset-index.js';

function ledgerOf(n: number, start = 1000): IndexedLedger {
  const l = new IndexedLedger(42, start, 3, 1_700_000_000_000);
  let offset = start;
  for (let i = 0; i < n; i++) {
    offset += i % 5 === 0 ? 10 : 0; // gaps
    const last = offset + (i % 3);
    l.push(last, i % 7 === 0 ? -1 : 1_700_000_000_000 + ((i * 37) % 1000) - 500, 100);
    offset = last + 1;
  }
  l.seal(1_700_000_100_000);
  return l;
}

const expectFor = (l: IndexedLedger) => ({
  ledgerId: l.ledgerId,
  startOffset: l.startOffset,
  entries: l.count,
  epoch: l.epoch,
  createdAtMs: l.createdAtMs,
  bytes: l.bytes,
  sealedAtMs: l.sealedAtMs!,
});

describe('index snapshots', () => {
  it('round-trips offsets and timestamps, across several chunks', () => {
    const l = ledgerOf(CHUNK_BATCHES + 10);
    const chunks = encodeIndexSnapshot(l);
    expect(chunks.length).toBe(2);
    const back = decodeIndexSnapshot(chunks, expectFor(l));
    if (typeof back === 'string') throw new Error(back);
    expect(back.count).toBe(l.count);
    for (let i = 0; i < l.count; i += 997) {
      expect(back.lastOffsetAt(i)).toBe(l.lastOffsetAt(i));
      expect(back.maxTimestampAt(i)).toBe(l.maxTimestampAt(i));
    }
    expect(back.maxTimestamp).toBe(l.maxTimestamp);
    expect(back.maxTimestampEntry).toBe(l.maxTimestampEntry);
    expect(back.endOffset).toBe(l.endOffset);
    expect(back.bytes).toBe(l.bytes);
    expect(back.sealedAtMs).toBe(l.sealedAtMs);
    expect(back.entryForTimestamp(l.maxTimestamp)).toBe(l.entryForTimestamp(l.maxTimestamp));
  });

  it('encodes an empty ledger as one empty chunk', () => {
    const l = ledgerOf(0);
    const back = decodeIndexSnapshot(encodeIndexSnapshot(l), expectFor(l));
    expect(typeof back === 'string' ? back : back.count).toBe(0);
  });

  it('rejects a flipped byte, a snapshot of another ledger and one that disagrees with the chain', () => {
    const l = ledgerOf(100);
    const chunks = encodeIndexSnapshot(l);
    const damaged = Buffer.from(chunks[0]!);
    damaged[60]! ^= 1;
    expect(decodeIndexSnapshot([damaged], expectFor(l))).toBe('checksum mismatch');
    expect(decodeIndexSnapshot(chunks, { ...expectFor(l), ledgerId: 43 })).toMatch(/ledger 42/);
    expect(decodeIndexSnapshot(chunks, { ...expectFor(l), entries: 99 })).toMatch(/entries/);
    expect(decodeIndexSnapshot(chunks, { ...expectFor(l), startOffset: 999 })).toMatch(/start offset/);
    expect(decodeIndexSnapshot([chunks[0]!.subarray(0, 20)], expectFor(l))).toBe('chunk too short');
    const future = Buffer.from(chunks[0]!);
    future.writeUInt16LE(9, 8);
    expect(decodeIndexSnapshot([future], expectFor(l))).toMatch(/version 9/);
  });
});
