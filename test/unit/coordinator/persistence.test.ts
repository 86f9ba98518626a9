import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { createHeartbeatRequest } from '../../../protocol/messages/012-heartbeat.gen.js';
import { createOffsetCommitRequest, createOffsetCommitRequestPartition, createOffsetCommitRequestTopic } from '../../../protocol/messages/008-offset-commit.gen.js';
import { createOffsetFetchRequestGroup, createOffsetFetchRequestTopics } from '../../../protocol/messages/009-offset-fetch.gen.js';
import { RecordBatch } from '../../../protocol/records/batch.js';
import { buildRecordBatchSync } from '../../../protocol/records/builder.js';
import { batchAround, rawRecord } from '../../support/poisoned-batches.js';
import { ManualClock } from '../../../src/metadata/clock.js';
import { groupCoordinatorConfig } from '../../../src/coordinator/config.js';
import { GroupCoordinator, LAZY_LOAD_WAIT_MS } from '../../../src/coordinator/coordinator.js';
import { MemoryPartitionLog } from '../../../src/coordinator/memory-log.js';
import { decodeRecord } from '../../../src/coordinator/records.js';
import { assignmentBytes, FakeTopics, harness, settle, startJoin, sync, type Harness } from './harness.js';

const G = 'durable-group';

function commit(h: Harness | GroupCoordinator, groupId: string, offset: bigint, topic = 't', partition = 0) {
  const c = h instanceof GroupCoordinator ? h : h.coordinator;
  return c.commitOffsets(
    createOffsetCommitRequest({
      groupId,
      topics: [createOffsetCommitRequestTopic({ name: topic, partitions: [createOffsetCommitRequestPartition({ partitionIndex: partition, committedOffset: offset, committedMetadata: `m${offset}` })] })],
    }),
    8,
  );
}

async function committed(c: GroupCoordinator, groupId: string, topic = 't', partition = 0): Promise<bigint> {
  const f = await c.fetchOffsets(createOffsetFetchRequestGroup({ groupId, topics: [createOffsetFetchRequestTopics({ name: topic, partitionIndexes: [partition] })] }));
  if (f.errorCode !== 0) throw new Error(`fetch failed with ${f.errorCode}`);
  return f.topics[0]!.partitions[0]!.committedOffset;
}

describe('coordinator persistence', () => {
  it('restores committed offsets and Stable groups with their assignments after a restart', async () => {
    const h = await harness();
    h.topics.add('t', 2);
    const j = await startJoin(h, G);
    await h.advance(3000);
    const m = await j.result;
    await (await sync(h, G, m, { [m.memberId]: assignmentBytes({ t: [0, 1] }) })).result;
    await commit(h, G, 17n).then(() => undefined);
    await h.coordinator.commitOffsets(
      createOffsetCommitRequest({
        groupId: G,
        memberId: m.memberId,
        generationIdOrMemberEpoch: m.generationId,
        topics: [createOffsetCommitRequestTopic({ name: 't', partitions: [createOffsetCommitRequestPartition({ partitionIndex: 1, committedOffset: 99n, committedLeaderEpoch: 4 })] })],
      }),
      8,
    );

    const c = await h.restart();
    expect(await committed(c, G, 't', 1)).toBe(99n);
    const [d] = await c.describeGroups([G], 5);
    expect(d).toMatchObject({ groupState: 'Stable', protocolData: 'range' });
    expect(d!.members.map((x) => [x.memberId, x.memberAssignment])).toEqual([[m.memberId, assignmentBytes({ t: [0, 1] })]]);
    // The member carries on in its generation.
    expect((await c.heartbeat(createHeartbeatRequest({ groupId: G, generationId: m.generationId, memberId: m.memberId }))).errorCode).toBe(ErrorCode.NONE);
    // Loaded members get their session timer again: silence removes them.
    await h.advance(10_001);
    const [after] = await c.describeGroups([G], 5);
    expect(after!.members).toEqual([]);
    expect(after!.groupState).toBe('Empty');
  });

  it('answers COORDINATOR_LOAD_IN_PROGRESS once a partition loads for longer than a request waits, and blindly accepts heartbeats (as Kafka)', async () => {
    const clock = new ManualClock();
    const topics = new FakeTopics();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const log = new MemoryPartitionLog();
    const c = new GroupCoordinator({
      config: groupCoordinatorConfig(new Map([['offsets.topic.num.partitions', '1']])),
      topics,
      clock,
      openLog: async () => {
        await gate;
        return log;
      },
    });
    await c.start();
    topics.add('t', 1);
    const r = commit(c, G, 1n);
    const hb = c.heartbeat(createHeartbeatRequest({ groupId: G, generationId: 1, memberId: 'm' }));
    const f = c.fetchOffsets(createOffsetFetchRequestGroup({ groupId: G, topics: [] }));
    await settle();
    clock.advance(LAZY_LOAD_WAIT_MS);
    expect((await r).topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
    expect((await hb).errorCode).toBe(ErrorCode.NONE);
    expect((await f).errorCode).toBe(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
    release();
    await c.loaded();
    expect((await commit(c, G, 1n)).topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NONE);
    await c.stop();
    expect((await commit(c, G, 2n)).topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.COORDINATOR_NOT_AVAILABLE);
  });

  it('answers COORDINATOR_NOT_AVAILABLE when an append fails and goes back to what is durable', async () => {
    const h = await harness({}, { 'offsets.topic.num.partitions': '1' });
    h.topics.add('t', 1);
    await commit(h, G, 5n);
    h.logs[0]!.failNextAppends(1);
    const failed = await commit(h, G, 6n);
    expect(failed.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    await settle();
    expect(await committed(h.coordinator, G)).toBe(5n);
    expect((await commit(h, G, 7n)).topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NONE);
    expect(await committed(h.coordinator, G)).toBe(7n);
  });

  it('fails every write queued behind a failed append (their records depended on it)', async () => {
    const h = await harness({}, { 'offsets.topic.num.partitions': '1' });
    h.topics.add('t', 1);
    h.logs[0]!.failNextAppends(1);
    const results = await Promise.all([commit(h, 'a', 1n), commit(h, 'b', 2n), commit(h, 'c', 3n)]);
    const errors = results.map((r) => r.topics[0]!.partitions[0]!.errorCode);
    // The first write is appended alone; the two queued while it was in flight go in the next batch, failed with it.
    expect(errors[0]).toBe(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    expect(errors.every((e) => e === ErrorCode.COORDINATOR_NOT_AVAILABLE)).toBe(true);
    await settle();
    expect(await committed(h.coordinator, 'b')).toBe(-1n);
  });

  it('groups concurrent writes of a partition into one append (group commit)', async () => {
    const h = await harness({}, { 'offsets.topic.num.partitions': '1' });
    h.topics.add('t', 1);
    const before = h.logs[0]!.appendCalls;
    await Promise.all(Array.from({ length: 50 }, (_, i) => commit(h, `g${i}`, BigInt(i))));
    const appends = h.logs[0]!.appendCalls - before;
    expect(appends).toBeLessThanOrEqual(2);
    expect(await committed(h.coordinator, 'g49')).toBe(49n);
  });

  it('writes records in Kafka\'s __consumer_offsets format', async () => {
    const h = await harness({}, { 'offsets.topic.num.partitions': '1' });
    h.topics.add('t', 1);
    await commit(h, G, 12n);
    const batches = h.logs[0]!.storedBatches;
    const records = batches.flatMap((b) => [...RecordBatch.wrap(b).records()]);
    const offsetRecord = records.find((r) => r.key!.readInt16BE(0) === 1)!;
    const key = offsetRecord.key!;
    // int16 version 1 | string group | string topic | int32 partition
    expect(key.toString('hex')).toBe('0001' + '000d' + Buffer.from(G).toString('hex') + '0001' + Buffer.from('t').toString('hex') + '00000000');
    // Value v4, as Kafka 4.x writes it: flexible, with the committed topic's id in tagged field 0.
    expect(offsetRecord.value!.readInt16BE(0)).toBe(4);
    const decoded = decodeRecord(key, offsetRecord.value);
    expect(decoded).toMatchObject({ type: 'OffsetCommit', key: { group: G, topic: 't', partition: 0 }, value: { offset: 12n, metadata: 'm12', topicId: h.topics.get('t')!.topicId } });
  });

  it('skips a stored batch or record that does not decode and still loads everything else', async () => {
    const h = await harness({}, { 'offsets.topic.num.partitions': '1' });
    h.topics.add('t', 1);
    await commit(h, 'before', 5n);
    const log = h.logs[0]!;
    // Records a broker never writes: a batch whose record length lies, and a record whose key has no version.
    await log.append(batchAround({ count: 1, stored: rawRecord({ offsetDelta: 0, headerCount: -1 }) }));
    await log.append(buildRecordBatchSync([{ key: Buffer.from([1]), value: Buffer.from('x') }]));
    await commit(h, 'after', 7n);
    await settle();
    const c = await h.restart();
    expect(await committed(c, 'before')).toBe(5n);
    expect(await committed(c, 'after')).toBe(7n);
    expect(c.shard(0).lastLoad!.skippedUndecodable).toBe(1);
  });
});
