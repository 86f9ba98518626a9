import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { createOffsetCommitRequest, createOffsetCommitRequestPartition, createOffsetCommitRequestTopic } from '../../../protocol/messages/008-offset-commit.gen.js';
import { createOffsetFetchRequestGroup, createOffsetFetchRequestTopics } from '../../../protocol/messages/009-offset-fetch.gen.js';
import { createOffsetDeleteRequestPartition, createOffsetDeleteRequestTopic } from '../../../protocol/messages/047-offset-delete.gen.js';
import {
  createTxnOffsetCommitRequest,
  createTxnOffsetCommitRequestPartition,
  createTxnOffsetCommitRequestTopic,
  type TxnOffsetCommitRequest,
  type TxnOffsetCommitResponse,
} from '../../../protocol/messages/028-txn-offset-commit.gen.js';
import { RecordBatch } from '../../../protocol/records/batch.js';
import { parseEndTxnMarker } from '../../../protocol/records/control.js';
import { groupCoordinatorConfig } from '../../../src/coordinator/config.js';
import { GroupCoordinator } from '../../../src/coordinator/coordinator.js';
import { MemoryPartitionLog } from '../../../src/coordinator/memory-log.js';
import type { CoordinatorPartitionLog } from '../../../src/coordinator/storage.js';
import { ManualClock } from '../../../src/metadata/clock.js';
import { assignmentBytes, FakeTopics, harness, settle, startJoin, sync, type Harness } from './harness.js';

const G = 'txn-group';
const PID = 4000n;

function txnCommit(h: Harness, parts: Record<string, Array<[number, bigint]>>, init: Partial<TxnOffsetCommitRequest> = {}, apiVersion = 3): Promise<TxnOffsetCommitResponse> {
  return h.coordinator.txnOffsetCommit(
    createTxnOffsetCommitRequest({
      transactionalId: 'tx-1',
      groupId: G,
      producerId: PID,
      producerEpoch: 2,
      ...init,
      topics: Object.entries(parts).map(([name, ps]) =>
        createTxnOffsetCommitRequestTopic({
          name,
          partitions: ps.map(([partitionIndex, committedOffset]) => createTxnOffsetCommitRequestPartition({ partitionIndex, committedOffset, committedLeaderEpoch: 1, committedMetadata: 'txn' })),
        }),
      ),
    }),
    apiVersion,
  );
}

function plainCommit(h: Harness, topic: string, partition: number, offset: bigint) {
  return h.coordinator.commitOffsets(
    createOffsetCommitRequest({
      groupId: G,
      topics: [createOffsetCommitRequestTopic({ name: topic, partitions: [createOffsetCommitRequestPartition({ partitionIndex: partition, committedOffset: offset, committedMetadata: 'plain' })] })],
    }),
    8,
  );
}

async function fetched(h: Harness, topic: string, partitions: number[], requireStable = false): Promise<Array<[bigint, number]>> {
  const f = await h.coordinator.fetchOffsets(createOffsetFetchRequestGroup({ groupId: G, topics: [createOffsetFetchRequestTopics({ name: topic, partitionIndexes: partitions })] }), requireStable);
  expect(f.errorCode).toBe(ErrorCode.NONE);
  return f.topics[0]!.partitions.map((p) => [p.committedOffset, p.errorCode]);
}

function codes(r: TxnOffsetCommitResponse): Record<string, number[]> {
  return Object.fromEntries(r.topics.map((t) => [t.name, t.partitions.map((p) => p.errorCode)]));
}

function complete(h: Harness, commit: boolean, producerId = PID): Promise<number> {
  return h.coordinator.completeTransaction(h.coordinator.partitionFor(G), producerId, 2, 7, commit);
}

function batchesOf(h: Harness): RecordBatch[] {
  return h.logs[h.coordinator.partitionFor(G)]!.storedBatches.map((b) => RecordBatch.wrap(b));
}

describe('transactional offset commits', () => {
  it('writes a TxnOffsetCommit as one transactional batch of the producer, with sequence -1', async () => {
    const h = await harness();
    h.topics.add('t', 4);
    expect(codes(await txnCommit(h, { t: [[0, 10n], [1, 11n], [2, 12n]] }))).toEqual({ t: [0, 0, 0] });
    const batches = batchesOf(h);
    expect(batches).toHaveLength(1);
    const b = batches[0]!;
    expect([b.isTransactional, b.isControl, b.producerId, b.producerEpoch, b.baseSequence, [...b.records()].length]).toEqual([true, false, PID, 2, -1, 3]);
  });

  it('keeps transactional offsets pending until the marker: the committed value before, UNSTABLE_OFFSET_COMMIT with require_stable', async () => {
    const h = await harness();
    h.topics.add('t', 4);
    await plainCommit(h, 't', 0, 5n);
    await txnCommit(h, { t: [[0, 10n]] });
    expect(await fetched(h, 't', [0, 1])).toEqual([
      [5n, ErrorCode.NONE],
      [-1n, ErrorCode.NONE],
    ]);
    expect(await fetched(h, 't', [0, 1], true)).toEqual([
      [-1n, ErrorCode.UNSTABLE_OFFSET_COMMIT],
      [-1n, ErrorCode.NONE],
    ]);
  });

  it('makes pending offsets committed on a COMMIT marker, written as a control batch after the queued writes', async () => {
    const h = await harness();
    h.topics.add('t', 4);
    await txnCommit(h, { t: [[0, 10n], [1, 11n]] });
    expect(await complete(h, true)).toBe(ErrorCode.NONE);
    expect(await fetched(h, 't', [0, 1], true)).toEqual([
      [10n, ErrorCode.NONE],
      [11n, ErrorCode.NONE],
    ]);
    const marker = batchesOf(h).at(-1)!;
    expect([marker.isControl, marker.isTransactional, marker.producerId, marker.producerEpoch]).toEqual([true, true, PID, 2]);
    const r = [...marker.records()][0]!;
    expect(parseEndTxnMarker(r.key, r.value)).toEqual({ commit: true, coordinatorEpoch: 7 });
  });

  it('drops pending offsets on an ABORT marker', async () => {
    const h = await harness();
    h.topics.add('t', 4);
    await plainCommit(h, 't', 0, 5n);
    await txnCommit(h, { t: [[0, 10n]] });
    expect(await complete(h, false)).toBe(ErrorCode.NONE);
    expect(await fetched(h, 't', [0], true)).toEqual([[5n, ErrorCode.NONE]]);
  });

  it('lets a plain commit written after a pending transactional one win when the transaction commits, as Kafka orders them', async () => {
    const h = await harness();
    h.topics.add('t', 4);
    await txnCommit(h, { t: [[0, 10n], [1, 11n]] });
    await plainCommit(h, 't', 0, 20n);
    await complete(h, true);
    expect(await fetched(h, 't', [0, 1])).toEqual([
      [20n, ErrorCode.NONE],
      [11n, ErrorCode.NONE],
    ]);
    // The same after a reload from the log.
    await h.restart();
    expect(await fetched(h, 't', [0, 1])).toEqual([
      [20n, ErrorCode.NONE],
      [11n, ErrorCode.NONE],
    ]);
  });

  it('keeps the later of two producers’ transactional offsets whatever order their markers come in', async () => {
    const h = await harness();
    h.topics.add('t', 4);
    await txnCommit(h, { t: [[0, 10n]] }, { producerId: 1n });
    await txnCommit(h, { t: [[0, 20n]] }, { producerId: 2n, transactionalId: 'tx-2' });
    await complete(h, true, 2n);
    await complete(h, true, 1n);
    expect(await fetched(h, 't', [0])).toEqual([[20n, ErrorCode.NONE]]);
  });

  it('answers unknown topics UNKNOWN_TOPIC_OR_PARTITION and commits the others', async () => {
    const h = await harness();
    h.topics.add('t', 2);
    const r = await txnCommit(h, { t: [[0, 1n], [5, 1n]], nope: [[0, 1n]] });
    expect(codes(r)).toEqual({ t: [0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION], nope: [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION] });
  });

  it('refuses an empty group id with INVALID_GROUP_ID', async () => {
    const h = await harness();
    h.topics.add('t', 2);
    expect(codes(await txnCommit(h, { t: [[0, 1n]] }, { groupId: '' }))).toEqual({ t: [ErrorCode.INVALID_GROUP_ID] });
  });

  it('refuses a transactional commit that does not fit in one batch with UNKNOWN_SERVER_ERROR, writing nothing', async () => {
    const h = await harness({ offsetMetadataMaxBytes: 1 << 20 });
    h.topics.add('t', 400);
    const big = 'x'.repeat(4000);
    const r = await h.coordinator.txnOffsetCommit(
      createTxnOffsetCommitRequest({
        transactionalId: 'tx',
        groupId: G,
        producerId: PID,
        producerEpoch: 0,
        topics: [createTxnOffsetCommitRequestTopic({ name: 't', partitions: Array.from({ length: 400 }, (_, i) => createTxnOffsetCommitRequestPartition({ partitionIndex: i, committedOffset: 1n, committedMetadata: big })) })],
      }),
      3,
    );
    expect(new Set(codes(r).t)).toEqual(new Set([ErrorCode.UNKNOWN_SERVER_ERROR]));
    expect(batchesOf(h)).toHaveLength(0);
    expect(await fetched(h, 't', [0], true)).toEqual([[-1n, ErrorCode.NONE]]);
  });
});

describe('transactional offset commit validation (KIP-447)', () => {
  it('creates a group that does not exist when the commit carries no generation', async () => {
    const h = await harness();
    h.topics.add('t', 2);
    expect(codes(await txnCommit(h, { t: [[0, 1n]] }))).toEqual({ t: [0] });
    await complete(h, true);
    expect(await fetched(h, 't', [0])).toEqual([[1n, ErrorCode.NONE]]);
  });

  it('answers ILLEGAL_GENERATION for an unknown group with a generation, GROUP_ID_NOT_FOUND from v6', async () => {
    const h = await harness();
    h.topics.add('t', 2);
    expect(codes(await txnCommit(h, { t: [[0, 1n]] }, { generationIdOrMemberEpoch: 3, memberId: 'm' }))).toEqual({ t: [ErrorCode.ILLEGAL_GENERATION] });
    expect(codes(await txnCommit(h, { t: [[0, 1n]] }, { generationIdOrMemberEpoch: 3, memberId: 'm' }, 6))).toEqual({ t: [ErrorCode.GROUP_ID_NOT_FOUND] });
  });

  it('checks the member id, the group instance id and the generation of a classic group', async () => {
    const h = await harness();
    h.topics.add('t', 2);
    const j = await startJoin(h, G, { groupInstanceId: 'instance-a' });
    await h.advance(3000);
    const m = await j.result;
    await (await sync(h, G, m, { [m.memberId]: assignmentBytes({ t: [0, 1] }) }, 'instance-a')).result;
    const as = (init: Partial<TxnOffsetCommitRequest>) => txnCommit(h, { t: [[0, 1n]] }, init).then((r) => codes(r).t![0]);
    expect(await as({ generationIdOrMemberEpoch: m.generationId, memberId: 'other' })).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    expect(await as({ generationIdOrMemberEpoch: m.generationId, memberId: 'other', groupInstanceId: 'instance-a' })).toBe(ErrorCode.FENCED_INSTANCE_ID);
    expect(await as({ generationIdOrMemberEpoch: m.generationId + 1, memberId: m.memberId, groupInstanceId: 'instance-a' })).toBe(ErrorCode.ILLEGAL_GENERATION);
    expect(await as({ generationIdOrMemberEpoch: m.generationId, memberId: m.memberId, groupInstanceId: 'instance-a' })).toBe(ErrorCode.NONE);
    // v0-2 carry no member: accepted by a non-empty group, unlike a plain OffsetCommit (isTransactional).
    expect(await as({})).toBe(ErrorCode.NONE);
  });

  it('verifies the first write of a producer’s transaction in the partition with the transaction coordinator', async () => {
    const clock = new ManualClock();
    const topics = new FakeTopics();
    topics.add('t', 2);
    const logs = [new MemoryPartitionLog()];
    const calls: unknown[][] = [];
    let answer: number = ErrorCode.INVALID_TXN_STATE;
    const c = new GroupCoordinator({
      config: groupCoordinatorConfig(new Map([['offsets.topic.num.partitions', '1']])),
      topics,
      clock,
      openLog: async (p) => logs[p]!,
      txnVerification: {
        verify: async (...args) => {
          calls.push(args);
          return answer;
        },
      },
    });
    await c.start();
    const req = createTxnOffsetCommitRequest({
      transactionalId: 'tx-1',
      groupId: G,
      producerId: PID,
      producerEpoch: 2,
      topics: [createTxnOffsetCommitRequestTopic({ name: 't', partitions: [createTxnOffsetCommitRequestPartition({ partitionIndex: 0, committedOffset: 3n })] })],
    });
    expect((await c.txnOffsetCommit(req, 3)).topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.INVALID_TXN_STATE);
    expect(logs[0]!.storedBatches).toHaveLength(0);
    answer = ErrorCode.NONE;
    expect((await c.txnOffsetCommit(req, 3)).topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NONE);
    expect((await c.txnOffsetCommit(req, 3)).topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NONE);
    expect(calls).toEqual([
      ['tx-1', PID, 2, '__consumer_offsets', 0, false],
      ['tx-1', PID, 2, '__consumer_offsets', 0, false],
    ]);
    // v5 (transaction version 2, no AddOffsetsToTxn): the coordinator is asked to add the partition.
    calls.length = 0;
    const tv2 = { ...req, producerId: PID + 2n };
    expect((await c.txnOffsetCommit(tv2, 5)).topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NONE);
    expect(calls).toEqual([['tx-1', PID + 2n, 2, '__consumer_offsets', 0, true]]);
    // A verification that could not reach the transaction coordinator is retried by clients without a lookup.
    answer = ErrorCode.NETWORK_EXCEPTION;
    const other = { ...req, producerId: PID + 1n };
    expect((await c.txnOffsetCommit(other, 3)).topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
    await c.stop();
  });
});

describe('transaction completion', () => {
  it('answers NOT_COORDINATOR for a partition this broker does not own', async () => {
    const topics = new FakeTopics();
    const c = new GroupCoordinator({
      config: groupCoordinatorConfig(new Map([['offsets.topic.num.partitions', '2']])),
      topics,
      clock: new ManualClock(),
      openLog: async () => new MemoryPartitionLog(),
      ownership: { owns: (p) => p === 0 },
    });
    await c.start();
    expect(await c.completeTransaction(1, PID, 0, 0, true)).toBe(ErrorCode.NOT_COORDINATOR);
    expect(await c.completeTransaction(0, PID, 0, 0, true)).toBe(ErrorCode.NONE);
    expect(await c.completeTransaction(2, PID, 0, 0, true)).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    await c.stop();
    expect(await c.completeTransaction(0, PID, 0, 0, true)).toBe(ErrorCode.COORDINATOR_NOT_AVAILABLE);
  });

  it('answers COORDINATOR_LOAD_IN_PROGRESS while the partition loads past the lazy-load wait', async () => {
    const clock = new ManualClock();
    const log = new MemoryPartitionLog();
    let release!: () => void;
    const opened = new Promise<void>((r) => (release = r));
    const c = new GroupCoordinator({
      config: groupCoordinatorConfig(new Map([['offsets.topic.num.partitions', '1']])),
      topics: new FakeTopics(),
      clock,
      openLog: async (): Promise<CoordinatorPartitionLog> => {
        await opened;
        return log;
      },
    });
    await c.start();
    const answer = c.completeTransaction(0, PID, 0, 0, true);
    await settle();
    clock.advance(10_000);
    expect(await answer).toBe(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
    release();
    await c.loaded();
    expect(await c.completeTransaction(0, PID, 0, 0, true)).toBe(ErrorCode.NONE);
    await c.stop();
  });

  it('answers COORDINATOR_NOT_AVAILABLE when the marker cannot be written, and reloads what is durable', async () => {
    const h = await harness();
    h.topics.add('t', 2);
    await txnCommit(h, { t: [[0, 10n]] });
    h.logs[h.coordinator.partitionFor(G)]!.failNextAppends(1);
    expect(await complete(h, true)).toBe(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    await h.coordinator.loaded();
    expect(await fetched(h, 't', [0], true)).toEqual([[-1n, ErrorCode.UNSTABLE_OFFSET_COMMIT]]);
  });
});

describe('transactional offsets across loads and deletions', () => {
  it('replays pending offsets at load, and the markers written before it', async () => {
    const h = await harness();
    h.topics.add('t', 4);
    await txnCommit(h, { t: [[0, 10n]] }, { producerId: 1n });
    await complete(h, true, 1n);
    await txnCommit(h, { t: [[1, 11n]] }, { producerId: 2n });
    await complete(h, false, 2n);
    await txnCommit(h, { t: [[2, 12n]] }, { producerId: 3n });
    await h.restart();
    expect(h.coordinator.shard(h.coordinator.partitionFor(G)).lastLoad).toMatchObject({ transactional: 3, markers: 2 });
    expect(await fetched(h, 't', [0, 1, 2], true)).toEqual([
      [10n, ErrorCode.NONE],
      [-1n, ErrorCode.NONE],
      [-1n, ErrorCode.UNSTABLE_OFFSET_COMMIT],
    ]);
    await complete(h, true, 3n);
    expect(await fetched(h, 't', [2], true)).toEqual([[12n, ErrorCode.NONE]]);
  });

  it('tombstones pending offsets with DeleteGroups, so their commit adds nothing', async () => {
    const h = await harness();
    h.topics.add('t', 4);
    await txnCommit(h, { t: [[0, 10n]] });
    const [res] = await h.coordinator.deleteGroups([G]);
    expect(res!.errorCode).toBe(ErrorCode.NONE);
    await complete(h, true);
    expect(await fetched(h, 't', [0], true)).toEqual([[-1n, ErrorCode.NONE]]);
    await h.restart();
    expect(await fetched(h, 't', [0], true)).toEqual([[-1n, ErrorCode.NONE]]);
  });

  it('tombstones a pending offset with OffsetDelete', async () => {
    const h = await harness();
    h.topics.add('t', 4);
    await txnCommit(h, { t: [[0, 10n]] });
    const r = await h.coordinator.deleteOffsets(G, [createOffsetDeleteRequestTopic({ name: 't', partitions: [createOffsetDeleteRequestPartition({ partitionIndex: 0 })] })]);
    expect(r.errorCode).toBe(ErrorCode.NONE);
    expect(await fetched(h, 't', [0], true)).toEqual([[-1n, ErrorCode.NONE]]);
    await complete(h, true);
    expect(await fetched(h, 't', [0])).toEqual([[-1n, ErrorCode.NONE]]);
  });

  it('drops the pending offsets of a deleted topic: the transaction’s commit does not bring them back', async () => {
    const h = await harness();
    h.topics.add('t', 4);
    h.topics.add('u', 1);
    await txnCommit(h, { t: [[0, 10n]], u: [[0, 3n]] });
    h.topics.remove('t');
    await settle();
    h.topics.add('t', 4);
    await complete(h, true);
    expect(await fetched(h, 't', [0])).toEqual([[-1n, ErrorCode.NONE]]);
    expect(await fetched(h, 'u', [0])).toEqual([[3n, ErrorCode.NONE]]);
  });

  it('never expires an offset a pending transactional offset may replace, nor a group with an open transaction', async () => {
    const h = await harness({ offsetsRetentionMs: 1000, offsetsRetentionCheckIntervalMs: 500 });
    h.topics.add('t', 4);
    await plainCommit(h, 't', 0, 5n);
    await txnCommit(h, { t: [[0, 10n], [1, 11n]] });
    await h.advance(2000);
    expect(await fetched(h, 't', [0])).toEqual([[5n, ErrorCode.NONE]]);
    await complete(h, true);
    expect(await fetched(h, 't', [0, 1])).toEqual([
      [10n, ErrorCode.NONE],
      [11n, ErrorCode.NONE],
    ]);
  });
});

describe('producer epochs', () => {
  it('refuses a transactional commit or a marker of an older epoch than the open transaction’s with INVALID_PRODUCER_EPOCH, also after a reload', async () => {
    const h = await harness();
    h.topics.add('t', 2);
    await txnCommit(h, { t: [[0, 10n]] }, { producerEpoch: 3 });
    expect(codes(await txnCommit(h, { t: [[0, 99n]] }, { producerEpoch: 2 }))).toEqual({ t: [ErrorCode.INVALID_PRODUCER_EPOCH] });
    await h.restart();
    expect(codes(await txnCommit(h, { t: [[0, 99n]] }, { producerEpoch: 2 }))).toEqual({ t: [ErrorCode.INVALID_PRODUCER_EPOCH] });
    expect(await h.coordinator.completeTransaction(h.coordinator.partitionFor(G), PID, 2, 0, true)).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
    expect(await h.coordinator.completeTransaction(h.coordinator.partitionFor(G), PID, 3, 0, true)).toBe(ErrorCode.NONE);
    expect(await fetched(h, 't', [0])).toEqual([[10n, ErrorCode.NONE]]);
  });

  it('leaves no group behind when a transactional commit to a group that does not exist is refused', async () => {
    const h = await harness({}, { 'offsets.topic.num.partitions': '1' });
    h.topics.add('t', 2);
    await txnCommit(h, { t: [[0, 10n]] }, { producerEpoch: 3, groupId: 'other' });
    expect(codes(await txnCommit(h, { t: [[0, 1n]] }, { producerEpoch: 0, groupId: 'fresh' }))).toEqual({ t: [ErrorCode.INVALID_PRODUCER_EPOCH] });
    const { groups } = await h.coordinator.listGroups([], []);
    expect(groups.map((g) => g.groupId)).toEqual(['other']);
  });
});
