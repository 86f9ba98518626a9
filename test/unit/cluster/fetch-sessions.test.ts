import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import type { LogStateWatcher } from '../../../src/log/partition-log.js';
import { FetchSessionCache, partitionKey, type FetchPartition, type FetchRequestPartitionView, type FetchSessionResult, type PartitionOutcome, type WatchableLog } from '../../../src/cluster/fetch-sessions.js';

function view(topic: string, partition: number, fetchOffset = 0n): FetchRequestPartitionView {
  const fetch: FetchPartition = { topic, topicId: 'id', partition, fetchOffset, partitionMaxBytes: 1024, currentLeaderEpoch: -1, logStartOffset: -1n };
  return { key: partitionKey(topic, partition), fetch };
}

function outcome(topic: string, partition: number, highWatermark: number, extra: Partial<PartitionOutcome> = {}): PartitionOutcome {
  return { key: partitionKey(topic, partition), hasRecords: false, errorCode: 0, highWatermark, lastStableOffset: highWatermark, logStartOffset: 0, ...extra };
}

/** What a fetch reads: a sessionless fetch's partitions, or every partition of a session none of which is quiet yet. */
function reads(r: FetchSessionResult): { partitions: FetchPartition[]; keys: string[] } {
  return r.session ? r.session.toRead('read_uncommitted', () => true) : { partitions: r.partitions, keys: r.keys };
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
    expect(reads(inc).partitions.map((p) => p.partition)).toEqual([0, 1, 2]);
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
    expect(reads(r).partitions.map((p) => [p.topic, p.partition, p.fetchOffset])).toEqual([
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
    expect(reads(cache.begin(sessionId, 1, [], [])).partitions.map((p) => p.partition)).toEqual([1, 2, 0]);
  });

  it('gives each partition its key, and completes through the partitions it gave as through their keys', () => {
    const cache = new FetchSessionCache(10);
    const first = cache.begin(0, 0, [view('t', 0), view('t', 1), view('u', 0)], []);
    expect(reads(first).keys).toEqual([partitionKey('t', 0), partitionKey('t', 1), partitionKey('u', 0)]);
    const next = cache.begin(first.sessionId, 1, [], []);
    expect(reads(next).keys).toEqual(reads(first).keys);
    // What the client was told is recorded on the session's own partition objects, moved to the end the same way.
    const withObjects = reads(next).partitions.map((p, i) => ({ ...outcome(p.topic, p.partition, 5, { hasRecords: i === 0 }), fetch: p }));
    expect(cache.complete(first.sessionId, true, withObjects)).toEqual([true, true, true]);
    const third = cache.begin(first.sessionId, 2, [], []);
    expect(reads(third).partitions.map((p) => `${p.topic}${p.partition}`)).toEqual(['t1', 'u0', 't0']);
    expect(cache.complete(first.sessionId, true, reads(third).partitions.map((p) => ({ ...outcome(p.topic, p.partition, 5), fetch: p })))).toEqual([false, false, false]);
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

  describe('quiet partitions', () => {
    /** A log as the session sees it: a state version, and the watchers it tells when the version moves. */
    class FakeLog implements WatchableLog {
      stateVersion = 0;
      readonly watchers = new Set<LogStateWatcher>();
      watchState(w: LogStateWatcher): void {
        this.watchers.add(w);
      }
      unwatchState(w: LogStateWatcher): void {
        this.watchers.delete(w);
      }
      change(): void {
        this.stateVersion++;
        for (const w of this.watchers) w.logStateChanged();
      }
    }
    const all = () => true;
    const names = (parts: FetchPartition[]) => parts.map((p) => `${p.topic}${p.partition}`);

    function quietSession(cache: FetchSessionCache, logs: FakeLog[]) {
      const r = cache.begin(0, 0, logs.map((_, i) => view('t', i)), []);
      const s = r.session!;
      const { partitions } = s.toRead('read_uncommitted', all);
      partitions.forEach((p, i) => s.settle(p, logs[i]!, logs[i]!.stateVersion, 'read_uncommitted', true, true));
      return { sessionId: r.sessionId, s, partitions };
    }

    it('skips a quiet partition until its log changes, the client lists it again, the isolation level changes or the broker stops serving it', () => {
      const cache = new FetchSessionCache(10);
      const logs = [new FakeLog(), new FakeLog(), new FakeLog()];
      const { sessionId, s, partitions } = quietSession(cache, logs);
      expect(names(s.toRead('read_uncommitted', all).partitions)).toEqual([]);
      logs[1]!.change();
      expect(names(s.toRead('read_uncommitted', all).partitions)).toEqual(['t1']);
      // Read again at the new version, with records: not quiet, read on every fetch until it is again.
      s.settle(partitions[1]!, logs[1]!, logs[1]!.stateVersion, 'read_uncommitted', true, false);
      expect(names(s.toRead('read_uncommitted', all).partitions)).toEqual(['t1']);
      s.settle(partitions[1]!, logs[1]!, logs[1]!.stateVersion, 'read_uncommitted', true, true);
      expect(names(s.toRead('read_uncommitted', all).partitions)).toEqual([]);

      expect(cache.begin(sessionId, 1, [view('t', 2, 9n)], []).errorCode).toBe(0);
      expect(names(s.toRead('read_uncommitted', all).partitions)).toEqual(['t2']);
      s.settle(partitions[2]!, logs[2]!, logs[2]!.stateVersion, 'read_uncommitted', true, true);
      expect(names(s.toRead('read_committed', all).partitions)).toEqual(['t0', 't1', 't2']);
      expect(names(s.toRead('read_uncommitted', (f) => f.partition !== 0).partitions)).toEqual(['t0']);
      // An error (unsettle) ends the quiet, and the watch.
      s.unsettle(partitions[0]!);
      expect(logs[0]!.watchers.size).toBe(0);
      expect(names(s.toRead('read_uncommitted', all).partitions)).toEqual(['t0']);
    });

    it('wakes a long poll for a change of a caught-up partition only, and says when a log changed during its read', async () => {
      const cache = new FetchSessionCache(10);
      const logs = [new FakeLog(), new FakeLog()];
      const { s, partitions } = quietSession(cache, logs);
      // Partition 1 stopped at its byte limit: its appends do not end a long poll (nor in Kafka's DelayedFetch).
      s.settle(partitions[1]!, logs[1]!, logs[1]!.stateVersion, 'read_uncommitted', false, false);
      const since = s.changes;
      logs[1]!.change();
      expect(s.changes).toBe(since);
      const woken = s.waitForChange(since, Date.now() + 60_000, new AbortController().signal);
      logs[0]!.change();
      await woken;
      expect(s.changes).toBe(since + 1);
      // A change already counted ends the wait at once.
      await s.waitForChange(since, Date.now() + 60_000, new AbortController().signal);

      const before = logs[0]!.stateVersion;
      logs[0]!.change(); // an append while the read was in flight
      expect(s.settle(partitions[0]!, logs[0]!, before, 'read_uncommitted', true, true)).toBe(true);
      expect(s.settle(partitions[0]!, logs[0]!, logs[0]!.stateVersion, 'read_uncommitted', true, true)).toBe(false);
      expect(names(s.toRead('read_uncommitted', all).partitions)).toEqual(['t1']);
    });

    it('stops watching the logs of forgotten partitions and of closed, replaced or evicted sessions, and ends their long polls', async () => {
      const cache = new FetchSessionCache(2);
      const a = [new FakeLog(), new FakeLog()];
      const first = quietSession(cache, a);
      expect(a.map((l) => l.watchers.size)).toEqual([1, 1]);
      cache.begin(first.sessionId, 1, [], [partitionKey('t', 0)]);
      expect(a.map((l) => l.watchers.size)).toEqual([0, 1]);
      // A partition read from a new log (reopened) watches that one instead.
      const reopened = new FakeLog();
      first.s.settle(first.partitions[1]!, reopened, 0, 'read_uncommitted', true, true);
      expect([a[1]!.watchers.size, reopened.watchers.size]).toEqual([0, 1]);

      const polling = first.s.waitForChange(first.s.changes, Date.now() + 60_000, new AbortController().signal);
      expect(cache.begin(first.sessionId, -1, [], []).sessionId).toBe(0);
      await polling;
      expect(reopened.watchers.size).toBe(0);
      // A fetch still reading the closed session watches nothing more.
      expect(first.s.closed).toBe(true);
      expect(first.s.settle(first.partitions[1]!, reopened, 0, 'read_uncommitted', true, true)).toBe(false);
      expect(reopened.watchers.size).toBe(0);

      const b = [new FakeLog()];
      const second = quietSession(cache, b);
      expect(cache.begin(second.sessionId, 0, [view('t', 0)], []).errorCode).toBe(0);
      expect(b[0]!.watchers.size).toBe(0);

      const c = [new FakeLog()];
      quietSession(cache, c);
      quietSession(cache, [new FakeLog()]);
      quietSession(cache, [new FakeLog()]); // the cache holds two: the oldest goes
      expect(c[0]!.watchers.size).toBe(0);
    });
  });
});
