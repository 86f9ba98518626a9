import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { FetchSessionCache, partitionKey, type FetchPartition, type FetchRequestPartitionView, type PartitionOutcome } from '../../../src/cluster/fetch-sessions.js';

function view(topic: string, partition: number, fetchOffset = 0n): FetchRequestPartitionView {
  const fetch: FetchPartition = { topic, topicId: 'id', partition, fetchOffset, partitionMaxBytes: 1024, currentLeaderEpoch: -1, logStartOffset: -1n };
  return { key: partitionKey(topic, partition), fetch };
}

function outcome(topic: string, partition: number, highWatermark: number, extra: Partial<PartitionOutcome> = {}): PartitionOutcome {
  return { key: partitionKey(topic, partition), hasRecords: false, errorCode: 0, highWatermark, lastStableOffset: highWatermark, logStartOffset: 0, ...extra };
}

describe('FetchSessionCache', () => {
  it('treats epoch -1 as a sessionless full fetch', () => {
    const cache = new FetchSessionCache(10);
    const r = cache.begin(0, -1, [view('t', 0), view('t', 1)], []);
    expect(r).toMatchObject({ errorCode: 0, sessionId: 0, incremental: false });
    expect(r.partitions.map((p) => p.partition)).toEqual([0, 1]);
    expect(cache.size).toBe(0);
    expect(cache.complete(0, false, [outcome('t', 0, 5), outcome('t', 1, 5)])).toEqual([true, true]);
  });

  it('opens a session on epoch 0 and then answers only partitions with something new', () => {
    const cache = new FetchSessionCache(10);
    const full = cache.begin(0, 0, [view('t', 0), view('t', 1), view('t', 2)], []);
    expect(full.sessionId).toBeGreaterThan(0);
    expect(full.incremental).toBe(false);
    expect(cache.complete(full.sessionId, false, [outcome('t', 0, 5), outcome('t', 1, 5), outcome('t', 2, 5)])).toEqual([true, true, true]);

    // An incremental request listing nothing reads every partition of the session.
    const inc = cache.begin(full.sessionId, 1, [], []);
    expect(inc).toMatchObject({ errorCode: 0, sessionId: full.sessionId, incremental: true });
    expect(inc.partitions.map((p) => p.partition)).toEqual([0, 1, 2]);
    // Only the partition whose high watermark moved, the one with records and the one with an error are said.
    expect(
      cache.complete(full.sessionId, true, [outcome('t', 0, 5), outcome('t', 1, 7), outcome('t', 2, 5, { errorCode: ErrorCode.KAFKA_STORAGE_ERROR })]),
    ).toEqual([false, true, true]);
    cache.begin(full.sessionId, 2, [], []);
    expect(cache.complete(full.sessionId, true, [outcome('t', 0, 5, { hasRecords: true }), outcome('t', 1, 7), outcome('t', 2, 5)])).toEqual([true, false, false]);
    cache.begin(full.sessionId, 3, [], []);
    expect(cache.complete(full.sessionId, true, [outcome('t', 0, 5, { logStartOffset: 2 }), outcome('t', 1, 7, { lastStableOffset: 6 }), outcome('t', 2, 5)])).toEqual([true, true, false]);
  });

  it('updates listed partitions, adds new ones and drops forgotten ones', () => {
    const cache = new FetchSessionCache(10);
    const { sessionId } = cache.begin(0, 0, [view('t', 0), view('t', 1)], []);
    const r = cache.begin(sessionId, 1, [view('t', 1, 40n), view('u', 0, 3n)], [partitionKey('t', 0)]);
    expect(r.partitions.map((p) => [p.topic, p.partition, p.fetchOffset])).toEqual([
      ['t', 1, 40n],
      ['u', 0, 3n],
    ]);
    // A partition updated keeps what the client was last told: unchanged, it is not answered.
    cache.complete(sessionId, true, [outcome('t', 1, 50), outcome('u', 0, 3)]);
    cache.begin(sessionId, 2, [view('t', 1, 45n)], []);
    expect(cache.complete(sessionId, true, [outcome('t', 1, 50), outcome('u', 0, 3)])).toEqual([false, false]);
  });

  it('moves a partition that returned records to the end, so the others get their turn first', () => {
    const cache = new FetchSessionCache(10);
    const { sessionId } = cache.begin(0, 0, [view('t', 0), view('t', 1), view('t', 2)], []);
    cache.complete(sessionId, false, [outcome('t', 0, 5, { hasRecords: true }), outcome('t', 1, 5), outcome('t', 2, 5)]);
    expect(cache.begin(sessionId, 1, [], []).partitions.map((p) => p.partition)).toEqual([1, 2, 0]);
  });

  it('gives each partition its key, and completes through the partitions it gave as through their keys', () => {
    const cache = new FetchSessionCache(10);
    const first = cache.begin(0, 0, [view('t', 0), view('t', 1), view('u', 0)], []);
    expect(first.keys).toEqual([partitionKey('t', 0), partitionKey('t', 1), partitionKey('u', 0)]);
    const next = cache.begin(first.sessionId, 1, [], []);
    expect(next.keys).toEqual(first.keys);
    // What the client was told is recorded on the session's own partition objects, moved to the end the same way.
    const withObjects = next.partitions.map((p, i) => ({ ...outcome(p.topic, p.partition, 5, { hasRecords: i === 0 }), fetch: p }));
    expect(cache.complete(first.sessionId, true, withObjects)).toEqual([true, true, true]);
    const third = cache.begin(first.sessionId, 2, [], []);
    expect(third.partitions.map((p) => `${p.topic}${p.partition}`)).toEqual(['t1', 'u0', 't0']);
    expect(cache.complete(first.sessionId, true, third.partitions.map((p) => ({ ...outcome(p.topic, p.partition, 5), fetch: p })))).toEqual([false, false, false]);
    // A sessionless fetch lists its keys too.
    expect(cache.begin(0, -1, [view('v', 3)], []).keys).toEqual([partitionKey('v', 3)]);
  });

  it('answers FETCH_SESSION_ID_NOT_FOUND for an unknown id and INVALID_FETCH_SESSION_EPOCH for a wrong epoch', () => {
    const cache = new FetchSessionCache(10);
    const { sessionId } = cache.begin(0, 0, [view('t', 0)], []);
    expect(cache.begin(sessionId + 1, 1, [], [])).toMatchObject({ errorCode: ErrorCode.FETCH_SESSION_ID_NOT_FOUND, sessionId: 0, partitions: [] });
    expect(cache.begin(sessionId, 2, [], [])).toMatchObject({ errorCode: ErrorCode.INVALID_FETCH_SESSION_EPOCH, sessionId: 0, partitions: [] });
    // The expected epoch still works after a wrong one; a replayed epoch does not.
    expect(cache.begin(sessionId, 1, [], []).errorCode).toBe(0);
    expect(cache.begin(sessionId, 1, [], []).errorCode).toBe(ErrorCode.INVALID_FETCH_SESSION_EPOCH);
    expect(cache.begin(sessionId, 2, [], []).errorCode).toBe(0);
  });

  it('closes a session on epoch -1 and replaces it on epoch 0', () => {
    const cache = new FetchSessionCache(10);
    const a = cache.begin(0, 0, [view('t', 0)], []).sessionId;
    const b = cache.begin(a, 0, [view('t', 1)], []).sessionId;
    expect(b).not.toBe(a);
    expect(cache.begin(a, 1, [], []).errorCode).toBe(ErrorCode.FETCH_SESSION_ID_NOT_FOUND);
    expect(cache.begin(b, -1, [view('t', 1)], [])).toMatchObject({ errorCode: 0, sessionId: 0 });
    expect(cache.size).toBe(0);
  });

  it('evicts the least recently used session when full, and keeps none when the cache has no slots', () => {
    const cache = new FetchSessionCache(2);
    const a = cache.begin(0, 0, [view('t', 0)], []).sessionId;
    const b = cache.begin(0, 0, [view('t', 0)], []).sessionId;
    // Using `a` makes `b` the oldest.
    expect(cache.begin(a, 1, [], []).errorCode).toBe(0);
    const c = cache.begin(0, 0, [view('t', 0)], []).sessionId;
    expect(cache.size).toBe(2);
    expect(cache.begin(b, 1, [], []).errorCode).toBe(ErrorCode.FETCH_SESSION_ID_NOT_FOUND);
    expect(cache.begin(a, 2, [], []).errorCode).toBe(0);
    expect(cache.begin(c, 1, [], []).errorCode).toBe(0);

    const none = new FetchSessionCache(0);
    expect(none.begin(0, 0, [view('t', 0)], [])).toMatchObject({ errorCode: 0, sessionId: 0, incremental: false });
    expect(none.size).toBe(0);
  });
});
