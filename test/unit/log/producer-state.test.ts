import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { BATCHES_TO_RETAIN, PartitionProducerState, type BatchIdentity, type SequenceCheck } from '../../../src/log/producer-state.js';

const PID = 1000n;
const NOW = 1_700_000_000_000;

function b(baseSequence: number, records = 1, producerEpoch = 0, producerId = PID): BatchIdentity {
  return { producerId, producerEpoch, baseSequence, lastOffsetDelta: records - 1 };
}

/** Checks and, when accepted, commits a batch at `offset`; returns the check's kind or error code. */
function append(state: PartitionProducerState, batch: BatchIdentity, offset: bigint): string | number {
  const r = state.check(batch, NOW);
  if (r.kind === 'append') r.commit(offset, offset + BigInt(batch.lastOffsetDelta), BigInt(NOW));
  return r.kind === 'error' ? r.errorCode : r.kind;
}

function errorCode(r: SequenceCheck): number {
  return r.kind === 'error' ? r.errorCode : 0;
}

describe('PartitionProducerState', () => {
  it('lets batches without a producer id through', () => {
    const s = new PartitionProducerState();
    expect(s.check(b(-1, 1, -1, -1n), NOW).kind).toBe('append');
    expect(s.size).toBe(0);
  });

  it('accepts consecutive sequences and answers a retry with the original offsets', async () => {
    const s = new PartitionProducerState();
    expect(append(s, b(0, 3), 0n)).toBe('append');
    expect(append(s, b(3, 2), 3n)).toBe('append');
    const dup = s.check(b(0, 3), NOW);
    expect(dup.kind).toBe('duplicate');
    await expect((dup as Extract<SequenceCheck, { kind: 'duplicate' }>).original).resolves.toEqual({ baseOffset: 0n, lastOffset: 2n, timestamp: BigInt(NOW) });
    // Same first sequence, different length: not the same batch.
    expect(errorCode(s.check(b(0, 2), NOW))).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
  });

  it('remembers the last five batches only', () => {
    const s = new PartitionProducerState();
    for (let i = 0; i <= BATCHES_TO_RETAIN; i++) expect(append(s, b(i), BigInt(i))).toBe('append');
    expect(s.check(b(BATCHES_TO_RETAIN), NOW).kind).toBe('duplicate');
    expect(s.check(b(1), NOW).kind).toBe('duplicate');
    expect(errorCode(s.check(b(0), NOW))).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
  });

  it('answers a pipelined duplicate once the original is appended, or with null if its append failed', async () => {
    const s = new PartitionProducerState();
    const first = s.check(b(0, 2), NOW);
    expect(first.kind).toBe('append');
    const dup = s.check(b(0, 2), NOW) as Extract<SequenceCheck, { kind: 'duplicate' }>;
    expect(dup.kind).toBe('duplicate');
    // The next batch may be checked while the first is still being written.
    const second = s.check(b(2, 1), NOW);
    expect(second.kind).toBe('append');
    (first as Extract<SequenceCheck, { kind: 'append' }>).commit(10n, 11n, 5n);
    await expect(dup.original).resolves.toEqual({ baseOffset: 10n, lastOffset: 11n, timestamp: 5n });

    const failing = s.check(b(3, 1), NOW) as Extract<SequenceCheck, { kind: 'append' }>;
    const dupOfFailing = s.check(b(3, 1), NOW) as Extract<SequenceCheck, { kind: 'duplicate' }>;
    failing.abort();
    await expect(dupOfFailing.original).resolves.toBeNull();
    // Forgotten: a retry is appended, not mistaken for a duplicate of data that was never written.
    expect(s.check(b(3, 1), NOW).kind).toBe('append');
  });

  it('refuses gaps and sequences from the past with OUT_OF_ORDER_SEQUENCE_NUMBER', () => {
    const s = new PartitionProducerState();
    append(s, b(0, 5), 0n);
    expect(errorCode(s.check(b(6), NOW))).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
    expect(errorCode(s.check(b(4), NOW))).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
    expect(s.check(b(5), NOW).kind).toBe('append');
  });

  it('wraps the sequence from 2^31-1 to 0', () => {
    const s = new PartitionProducerState();
    expect(append(s, b(0x7ffffffe, 2), 0n)).toBe('append');
    expect(append(s, b(0, 1), 2n)).toBe('append');
    // A batch that wraps inside itself.
    const t = new PartitionProducerState();
    expect(append(t, b(0x7ffffffe, 4), 0n)).toBe('append');
    expect(append(t, b(2, 1), 4n)).toBe('append');
  });

  it('fences older epochs and wants sequence 0 from a newer one', () => {
    const s = new PartitionProducerState();
    append(s, b(0, 3, 2), 0n);
    expect(errorCode(s.check(b(3, 1, 1), NOW))).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
    expect(errorCode(s.check(b(3, 1, 3), NOW))).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
    expect(append(s, b(0, 1, 3), 3n)).toBe('append');
    expect(s.epochOf(PID)).toBe(3);
    expect(errorCode(s.check(b(3, 1, 2), NOW))).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
  });

  it('accepts an unknown producer at any sequence, as Kafka does after its state was removed', () => {
    const s = new PartitionProducerState();
    expect(append(s, b(42, 2), 0n)).toBe('append');
    expect(append(s, b(44), 2n)).toBe('append');
  });

  it('rebuilds from replayed batches: duplicates, next sequence and epoch are as before', () => {
    const s = new PartitionProducerState();
    s.replay(b(0, 2, 0), 0n, 1n, 1n, NOW);
    s.replay(b(0, 3, 1), 2n, 4n, 2n, NOW);
    s.replay(b(2, 1, 0, 77n), 5n, 5n, 3n, NOW);
    s.replay(b(3, 1, 1), 6n, 6n, 4n, NOW);
    expect(s.epochOf(PID)).toBe(1);
    expect(s.check(b(3, 1, 1), NOW).kind).toBe('duplicate');
    expect(errorCode(s.check(b(0, 2, 0), NOW))).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
    expect(s.check(b(4, 1, 1), NOW).kind).toBe('append');
    expect(s.check(b(3, 1, 0, 77n), NOW).kind).toBe('append');
  });

  it('forgets producers idle longer than the expiration', () => {
    const s = new PartitionProducerState();
    append(s, b(0), 0n);
    s.check(b(0, 1, 0, 5n), NOW + 10_000);
    s.expire(NOW + 20_000, 15_000);
    expect(s.epochOf(PID)).toBe(-1);
    // The other producer has a batch still being written: it is kept.
    expect(s.epochOf(5n)).toBe(0);
  });
});
