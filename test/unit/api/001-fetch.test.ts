/** Fetch in-process, over fakes of the node, topics, partitions, fetch sessions and metrics services. */
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { createFetchRequest, createFetchRequestFetchPartition, createFetchRequestFetchTopic, type FetchResponse } from '../../../protocol/messages/001-fetch.gen.js';
import { fetch } from '../../../src/api/001-fetch.js';
import { NO_RESPONSE } from '../../../src/api/handler.js';
import { FetchSessionCache } from '../../../src/cluster/fetch-sessions.js';
import { buildBatch, producerBatch } from '../log/support.js';
import { FakeTopicsAndPartitions, fakeCluster, fakeNode, RecordingMetrics, requestContext, topicRecord } from './fakes.js';

let world: FakeTopicsAndPartitions;
let metrics: RecordingMetrics;

beforeEach(async () => {
  world = new FakeTopicsAndPartitions();
  metrics = new RecordingMetrics();
  await world.addTopic(topicRecord('orders', 1, { topicId: 'b3JkZXJzLXRvcGljLWlkAA' }));
});

afterEach(() => world.close());

function ctx(apiVersion: number, signal?: AbortSignal) {
  return requestContext(
    { node: fakeNode(), topics: world.topicService, cluster: fakeCluster(), partitions: world.partitionService, fetchSessions: new FetchSessionCache(10), metrics },
    { apiVersion, signal },
  );
}

function request(o: { topic?: string; topicId?: string; offset?: bigint; minBytes?: number; maxWaitMs?: number; isolationLevel?: number }) {
  return createFetchRequest({
    isolationLevel: o.isolationLevel ?? 0,
    maxWaitMs: o.maxWaitMs ?? 0,
    minBytes: o.minBytes ?? 0,
    topics: [createFetchRequestFetchTopic({ topic: o.topic ?? '', topicId: o.topicId ?? undefined, partitions: [createFetchRequestFetchPartition({ partition: 0, fetchOffset: o.offset ?? 0n, partitionMaxBytes: 1 << 20 })] })],
  });
}

async function send(req: ReturnType<typeof request>, apiVersion = 12, signal?: AbortSignal): Promise<FetchResponse> {
  const res = await fetch.handle(req, ctx(apiVersion, signal));
  if (res === NO_RESPONSE) throw new Error('no response');
  return res;
}

describe('Fetch handler', () => {
  it('returns the stored batches from the fetch offset with the partition offsets, and counts bytes out', async () => {
    const log = world.partitionService.get('orders', 0)!.log;
    const batch = buildBatch(3);
    await log.append(batch);
    const res = await send(request({ topic: 'orders' }));
    const p = res.responses[0]!.partitions[0]!;
    expect(p).toMatchObject({ partitionIndex: 0, errorCode: ErrorCode.NONE, highWatermark: 3n, lastStableOffset: 3n, logStartOffset: 0n });
    expect(Buffer.concat(([] as Buffer[]).concat(p.records as Buffer | Buffer[])).length).toBe(batch.length);
    expect(metrics.fetches).toEqual([{ topic: 'orders', bytes: batch.length }]);
  });

  it('answers OFFSET_OUT_OF_RANGE past the log end, with the partition offsets', async () => {
    await world.partitionService.get('orders', 0)!.log.append(buildBatch(2));
    const p = (await send(request({ topic: 'orders', offset: 5n }))).responses[0]!.partitions[0]!;
    expect(p).toMatchObject({ errorCode: ErrorCode.OFFSET_OUT_OF_RANGE, highWatermark: 2n, logStartOffset: 0n });
  });

  it('resolves topics by id from v13 and answers UNKNOWN_TOPIC_ID for an id it does not know', async () => {
    await world.partitionService.get('orders', 0)!.log.append(buildBatch(1));
    const known = (await send(request({ topicId: 'b3JkZXJzLXRvcGljLWlkAA' }), 13)).responses[0]!;
    expect(known.topicId).toBe('b3JkZXJzLXRvcGljLWlkAA');
    expect(known.partitions[0]!.errorCode).toBe(ErrorCode.NONE);
    const unknown = (await send(request({ topicId: 'dW5rbm93bi10b3BpYy1pZA' }), 13)).responses[0]!;
    expect(unknown.partitions[0]!.errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_ID);
  });

  it('waits for minBytes until an append arrives, woken by the partition, before maxWaitMs', async () => {
    const log = world.partitionService.get('orders', 0)!.log;
    const started = Date.now();
    const pending = send(request({ topic: 'orders', minBytes: 1, maxWaitMs: 20_000 }));
    setImmediate(() => void log.append(buildBatch(1)));
    const p = (await pending).responses[0]!.partitions[0]!;
    expect(p.highWatermark).toBe(1n);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('ends a long poll when the request signal aborts (connection closed), answering what it has', async () => {
    const abort = new AbortController();
    const pending = send(request({ topic: 'orders', minBytes: 1, maxWaitMs: 60_000 }), 12, abort.signal);
    setImmediate(() => abort.abort());
    const p = (await pending).responses[0]!.partitions[0]!;
    expect(p).toMatchObject({ errorCode: ErrorCode.NONE, highWatermark: 0n });
  });

  it('answers read_committed with the last stable offset and the aborted transactions of what it returns; read_uncommitted with none', async () => {
    const log = world.partitionService.get('orders', 0)!.log;
    await log.append(producerBatch(21, 0, 0)); // 0-1
    await log.writeTxnMarker({ producerId: 21n, producerEpoch: 0, coordinatorEpoch: 0, commit: false }); // 2
    await log.append(producerBatch(22, 0, 0)); // 3-4: ongoing
    const committed = (await send(request({ topic: 'orders', isolationLevel: 1 }))).responses[0]!.partitions[0]!;
    expect(committed).toMatchObject({ highWatermark: 5n, lastStableOffset: 3n });
    expect(committed.abortedTransactions).toEqual([expect.objectContaining({ producerId: 21n, firstOffset: 0n })]);
    const uncommitted = (await send(request({ topic: 'orders' }))).responses[0]!.partitions[0]!;
    expect(uncommitted).toMatchObject({ highWatermark: 5n, lastStableOffset: 3n, abortedTransactions: null });
  });

  it('ends a read_committed long poll with the marker that moves the last stable offset past the fetch offset', async () => {
    const log = world.partitionService.get('orders', 0)!.log;
    await log.append(producerBatch(21, 0, 0)); // 0-1: LSO 0
    const started = Date.now();
    const pending = send(request({ topic: 'orders', isolationLevel: 1, minBytes: 1, maxWaitMs: 20_000 }));
    await log.append(buildBatch(1)); // 2: the high watermark moves, the last stable offset does not
    await log.writeTxnMarker({ producerId: 21n, producerEpoch: 0, coordinatorEpoch: 0, commit: true }); // 3
    const p = (await pending).responses[0]!.partitions[0]!;
    expect(p.lastStableOffset).toBe(4n);
    expect(([] as Buffer[]).concat(p.records as Buffer | Buffer[]).length).toBeGreaterThan(0);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

describe('Fetch in a session (KIP-227)', () => {
  const TOPIC_ID = 'ZXZlbnRzLXRvcGljLWlkAAA';
  let sessions: FetchSessionCache;
  let owned: (topic: string, partition: number) => boolean;
  /** Reads of each partition's log (readAtEnd or read), by partition. */
  let readsOf: number[];

  beforeEach(async () => {
    sessions = new FetchSessionCache(10);
    owned = () => true;
    await world.addTopic(topicRecord('events', 3, { topicId: TOPIC_ID }));
    readsOf = [0, 0, 0];
    for (let p = 0; p < 3; p++) {
      const log = world.partitionService.get('events', p)!.log;
      const readAtEnd = log.readAtEnd.bind(log);
      const read = log.read.bind(log);
      log.readAtEnd = (...a) => (readsOf[p]!++, readAtEnd(...a));
      log.read = (...a) => (readsOf[p]!++, read(...a));
    }
  });

  function sessionCtx() {
    const cluster = fakeCluster({ owned: (t, p) => owned(t, p) });
    return requestContext({ node: fakeNode(), topics: world.topicService, cluster, partitions: world.partitionService, fetchSessions: sessions, metrics }, { apiVersion: 13 });
  }

  async function sessionFetch(o: { sessionId: number; epoch: number; offsets?: Record<number, bigint>; minBytes?: number; maxWaitMs?: number }): Promise<FetchResponse> {
    const partitions = Object.entries(o.offsets ?? {}).map(([p, offset]) => createFetchRequestFetchPartition({ partition: Number(p), fetchOffset: offset, partitionMaxBytes: 1 << 20 }));
    const req = createFetchRequest({
      maxWaitMs: o.maxWaitMs ?? 0,
      minBytes: o.minBytes ?? 0,
      sessionId: o.sessionId,
      sessionEpoch: o.epoch,
      topics: partitions.length > 0 ? [createFetchRequestFetchTopic({ topicId: TOPIC_ID, partitions })] : [],
    });
    const res = await fetch.handle(req, sessionCtx());
    if (res === NO_RESPONSE) throw new Error('no response');
    return res;
  }

  const answered = (res: FetchResponse) => res.responses.flatMap((t) => t.partitions.map((p) => p.partitionIndex)).sort();

  it('reads a caught-up partition only when its log changes, and is woken by the session for it', async () => {
    const full = await sessionFetch({ sessionId: 0, epoch: 0, offsets: { 0: 0n, 1: 0n, 2: 0n } });
    expect(answered(full)).toEqual([0, 1, 2]);
    expect(readsOf).toEqual([1, 1, 1]);

    // Nothing new: an empty answer, and no partition read at all.
    expect(answered(await sessionFetch({ sessionId: full.sessionId, epoch: 1 }))).toEqual([]);
    expect(readsOf).toEqual([1, 1, 1]);

    // A long poll on the session ends with the append to partition 1, which alone is read and answered.
    const started = Date.now();
    const pending = sessionFetch({ sessionId: full.sessionId, epoch: 2, minBytes: 1, maxWaitMs: 20_000 });
    setImmediate(() => void world.partitionService.get('events', 1)!.log.append(buildBatch(2)));
    const woken = await pending;
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(answered(woken)).toEqual([1]);
    expect(woken.responses[0]!.partitions[0]).toMatchObject({ highWatermark: 2n, errorCode: ErrorCode.NONE });
    expect(([] as Buffer[]).concat(woken.responses[0]!.partitions[0]!.records as Buffer | Buffer[]).length).toBeGreaterThan(0);
    expect(readsOf[0]).toBe(1);
    expect(readsOf[2]).toBe(1);

    // The client moves on past the records: partition 1 is read at its new position, then quiet again.
    expect(answered(await sessionFetch({ sessionId: full.sessionId, epoch: 3, offsets: { 1: 2n } }))).toEqual([]);
    const before = [...readsOf];
    expect(answered(await sessionFetch({ sessionId: full.sessionId, epoch: 4 }))).toEqual([]);
    expect(readsOf).toEqual(before);
  });

  it('answers a quiet partition again when its log start offset rises, and when the broker stops owning it', async () => {
    const log2 = world.partitionService.get('events', 2)!.log;
    await log2.append(buildBatch(3));
    const full = await sessionFetch({ sessionId: 0, epoch: 0, offsets: { 0: 0n, 1: 0n, 2: 3n } });
    expect(answered(full)).toEqual([0, 1, 2]);
    expect(answered(await sessionFetch({ sessionId: full.sessionId, epoch: 1 }))).toEqual([]);

    await log2.deleteRecords(2);
    const moved = await sessionFetch({ sessionId: full.sessionId, epoch: 2 });
    expect(answered(moved)).toEqual([2]);
    expect(moved.responses[0]!.partitions[0]).toMatchObject({ errorCode: ErrorCode.NONE, logStartOffset: 2n, highWatermark: 3n });

    // Ownership is checked on every fetch: the partition is answered NOT_LEADER_OR_FOLLOWER from the instant it is lost.
    owned = (_t, p) => p !== 0;
    const lost = await sessionFetch({ sessionId: full.sessionId, epoch: 3 });
    expect(answered(lost)).toEqual([0]);
    expect(lost.responses[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER);
  });

  it('reads every quiet partition again for a fetch at another isolation level', async () => {
    const full = await sessionFetch({ sessionId: 0, epoch: 0, offsets: { 0: 0n, 1: 0n, 2: 0n } });
    expect(answered(await sessionFetch({ sessionId: full.sessionId, epoch: 1 }))).toEqual([]);
    const req = createFetchRequest({ isolationLevel: 1, maxWaitMs: 0, minBytes: 0, sessionId: full.sessionId, sessionEpoch: 2, topics: [] });
    const before = [...readsOf];
    await fetch.handle(req, sessionCtx());
    expect(readsOf.map((n, i) => n - before[i]!)).toEqual([1, 1, 1]);
  });
});

describe('Fetch byte limits over many partitions', () => {
  // Kafka's rules (ReplicaManager.readFromLocalLog), one partition after another: each may take the smaller of
  // its partitionMaxBytes and what the fetch's maxBytes has left, in whole batches; only the first partition with
  // data may exceed that with one whole batch (KIP-74). The handler reads the partitions at once; its answer must
  // be the one these rules give in order.
  function expected(batchSizes: number[][], partitionMaxBytes: number[], maxBytes: number): number[] {
    let budget = maxBytes;
    let gotData = false;
    return batchSizes.map((sizes, p) => {
      const limit = Math.min(partitionMaxBytes[p]!, budget);
      let taken = 0;
      for (const s of sizes) {
        if (taken + s <= limit || (taken === 0 && !gotData)) taken += s;
        else break;
      }
      budget -= taken;
      if (taken > 0) gotData = true;
      return taken;
    });
  }

  it('answers each partition what reading them in order would', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.integer({ min: 1, max: 40 }), { maxLength: 4 }), { minLength: 1, maxLength: 8 }),
        fc.array(fc.integer({ min: 0, max: 3000 }), { minLength: 8, maxLength: 8 }),
        fc.integer({ min: 0, max: 6000 }),
        async (recordCounts, partitionMaxBytes, maxBytes) => {
          const local = new FakeTopicsAndPartitions();
          try {
            await local.addTopic(topicRecord('many', recordCounts.length));
            const sizes: number[][] = [];
            for (const [p, counts] of recordCounts.entries()) {
              const log = local.partitionService.get('many', p)!.log;
              sizes.push([]);
              for (const n of counts) {
                const batch = buildBatch(n, { valueBytes: 50 });
                await log.append(batch);
                sizes[p]!.push(batch.length);
              }
            }
            const req = createFetchRequest({
              isolationLevel: 0,
              maxWaitMs: 0,
              minBytes: 0,
              maxBytes,
              topics: [
                createFetchRequestFetchTopic({
                  topic: 'many',
                  partitions: recordCounts.map((_, p) => createFetchRequestFetchPartition({ partition: p, fetchOffset: 0n, partitionMaxBytes: partitionMaxBytes[p]! })),
                }),
              ],
            });
            const res = await fetch.handle(
              req,
              requestContext(
                { node: fakeNode(), topics: local.topicService, cluster: fakeCluster(), partitions: local.partitionService, fetchSessions: new FetchSessionCache(10), metrics: new RecordingMetrics() },
                { apiVersion: 12 },
              ),
            );
            if (res === NO_RESPONSE) throw new Error('no response');
            const got = res.responses[0]!.partitions.map((p) => Buffer.concat(([] as Buffer[]).concat((p.records as Buffer | Buffer[] | null) ?? [])).length);
            expect(got).toEqual(expected(sizes, partitionMaxBytes, maxBytes));
          } finally {
            local.close();
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});
