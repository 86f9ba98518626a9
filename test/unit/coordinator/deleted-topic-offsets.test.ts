import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { createOffsetCommitRequest, createOffsetCommitRequestPartition, createOffsetCommitRequestTopic } from '../../../protocol/messages/008-offset-commit.gen.js';
import { createOffsetFetchRequestGroup, createOffsetFetchRequestTopics } from '../../../protocol/messages/009-offset-fetch.gen.js';
import { RecordBatch } from '../../../protocol/records/batch.js';
import { groupCoordinatorConfig } from '../../../src/coordinator/config.js';
import { GroupCoordinator } from '../../../src/coordinator/coordinator.js';
import { MemoryPartitionLog } from '../../../src/coordinator/memory-log.js';
import { decodeRecord } from '../../../src/coordinator/records.js';
import type { CoordinatorPartitionLog } from '../../../src/coordinator/storage.js';
import { ManualClock } from '../../../src/metadata/clock.js';
import { FakeTopics } from './harness.js';

const G = 'g';

/** A broker's coordinator over logs and a topic registry that outlive it; no partition is loaded at start. */
function node(openLog?: (p: number) => Promise<CoordinatorPartitionLog>) {
  const topics = new FakeTopics();
  const logs = Array.from({ length: 4 }, () => new MemoryPartitionLog());
  const config = groupCoordinatorConfig(new Map([['offsets.topic.num.partitions', '4']]));
  const clock = new ManualClock();
  return {
    topics,
    logs,
    async start(): Promise<GroupCoordinator> {
      const c = new GroupCoordinator({ config, topics, clock, openLog: openLog ?? (async (p) => logs[p]!) });
      await c.start();
      return c;
    },
  };
}

async function commit(c: GroupCoordinator, topic: string, offset: bigint): Promise<number> {
  const r = await c.commitOffsets(
    createOffsetCommitRequest({ groupId: G, topics: [createOffsetCommitRequestTopic({ name: topic, partitions: [createOffsetCommitRequestPartition({ partitionIndex: 0, committedOffset: offset })] })] }),
    8,
  );
  return r.topics[0]!.partitions[0]!.errorCode;
}

async function committed(c: GroupCoordinator, topic: string): Promise<bigint> {
  const f = await c.fetchOffsets(createOffsetFetchRequestGroup({ groupId: G, topics: [createOffsetFetchRequestTopics({ name: topic, partitionIndexes: [0] })] }));
  expect(f.errorCode).toBe(ErrorCode.NONE);
  return f.topics[0]!.partitions[0]!.committedOffset;
}

/** The OffsetCommit tombstones in a partition log, as (group, topic, partition). */
function tombstones(log: MemoryPartitionLog): string[] {
  return log.storedBatches
    .flatMap((b) => [...RecordBatch.wrap(b).records()])
    .map((rec) => decodeRecord(rec.key!, rec.value))
    .flatMap((r) => (r.type === 'OffsetCommit' && r.value === null ? [`${r.key.group}/${r.key.topic}/${r.key.partition}`] : []));
}

describe('committed offsets of a deleted topic in a partition not loaded', () => {
  it('are dropped, with tombstones, when the partition loads after the topic was deleted and re-created under the same name', async () => {
    const n = node();
    n.topics.add('t', 1);
    n.topics.add('kept', 1);
    const first = await n.start();
    expect(await commit(first, 't', 42n)).toBe(ErrorCode.NONE);
    expect(await commit(first, 'kept', 7n)).toBe(ErrorCode.NONE);
    await first.stop();

    const c = await n.start();
    expect(c.partitionStatus()).toEqual([]);
    n.topics.remove('t');
    n.topics.add('t', 1);
    // The group's partition loads now, on its first request: offsets of the old 't' are not the new one's.
    expect(await committed(c, 't')).toBe(-1n);
    expect(await committed(c, 'kept')).toBe(7n);
    await c.stop();

    // Kafka's tombstones are in the log: the next broker does not find the old offset either.
    expect(tombstones(n.logs[c.partitionFor(G)]!)).toEqual([`${G}/t/0`]);
    const after = await n.start();
    expect(await committed(after, 't')).toBe(-1n);
    expect(await committed(after, 'kept')).toBe(7n);
    await after.stop();
  });

  it('are dropped when the partition was loading while the topic was deleted and re-created', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let gated = false;
    const logs = Array.from({ length: 4 }, () => new MemoryPartitionLog());
    const n = node(async (p) => {
      if (gated) await gate;
      return logs[p]!;
    });
    n.topics.add('t', 1);
    const first = await n.start();
    expect(await commit(first, 't', 42n)).toBe(ErrorCode.NONE);
    await first.stop();

    gated = true;
    const c = await n.start();
    const fetched = committed(c, 't');
    expect(c.partitionStatus().map((s) => s.status)).toEqual(['loading']);
    n.topics.remove('t');
    n.topics.add('t', 1);
    release();
    expect(await fetched).toBe(-1n);
    await c.stop();
  });

  it('are dropped when the topic was deleted while the broker was down', async () => {
    const n = node();
    n.topics.add('t', 1);
    n.topics.add('kept', 1);
    const first = await n.start();
    expect(await commit(first, 't', 42n)).toBe(ErrorCode.NONE);
    expect(await commit(first, 'kept', 7n)).toBe(ErrorCode.NONE);
    await first.stop();
    n.topics.remove('t');

    const c = await n.start();
    expect(await committed(c, 't')).toBe(-1n);
    expect(await committed(c, 'kept')).toBe(7n);
    await c.stop();
    expect(tombstones(n.logs[c.partitionFor(G)]!)).toEqual([`${G}/t/0`]);
  });

  it('of a topic deleted while the partition was loaded are dropped at once, and not again at its next load', async () => {
    const n = node();
    n.topics.add('t', 1);
    const c = await n.start();
    expect(await commit(c, 't', 42n)).toBe(ErrorCode.NONE);
    n.topics.remove('t');
    n.topics.add('t', 1);
    expect(await committed(c, 't')).toBe(-1n);
    // An offset of the new topic, committed after the deletion, survives the partition's next load.
    expect(await commit(c, 't', 5n)).toBe(ErrorCode.NONE);
    await c.released(c.partitionFor(G));
    expect(await committed(c, 't')).toBe(5n);
    await c.stop();
  });
});
