/** Fetch in-process, over fakes of the node, topics, partitions, fetch sessions and metrics services. */
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
