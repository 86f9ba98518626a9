import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { createOffsetCommitRequest, createOffsetCommitRequestPartition, createOffsetCommitRequestTopic } from '../../../protocol/messages/008-offset-commit.gen.js';
import { groupCoordinatorConfig } from '../../../src/coordinator/config.js';
import { GroupCoordinator } from '../../../src/coordinator/coordinator.js';
import { MemoryPartitionLog } from '../../../src/coordinator/memory-log.js';
import { ManualClock } from '../../../src/metadata/clock.js';
import { FakeTopics } from './harness.js';

function commit(c: GroupCoordinator, groupId: string, offset: bigint) {
  return c.commitOffsets(
    createOffsetCommitRequest({ groupId, topics: [createOffsetCommitRequestTopic({ name: 't', partitions: [createOffsetCommitRequestPartition({ partitionIndex: 0, committedOffset: offset })] })] }),
    8,
  );
}

async function coordinator(owned: (p: number) => boolean = () => true) {
  const topics = new FakeTopics();
  topics.add('t', 1);
  const logs = Array.from({ length: 4 }, () => new MemoryPartitionLog());
  const opened: number[] = [];
  const c = new GroupCoordinator({
    config: groupCoordinatorConfig(new Map([['offsets.topic.num.partitions', '4']])),
    topics,
    clock: new ManualClock(),
    openLog: async (p) => {
      opened.push(p);
      return logs[p]!;
    },
    ownership: { owns: owned },
  });
  await c.start();
  return { c, opened };
}

describe('group coordinator shards', () => {
  it('loads no __consumer_offsets partition at start, and loads a group\'s partition on its first request, which waits for it', async () => {
    const { c, opened } = await coordinator();
    expect(opened).toEqual([]);
    expect(c.partitionStatus()).toEqual([]);
    const p = c.partitionFor('g');
    expect((await commit(c, 'g', 5n)).topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NONE);
    expect(opened).toEqual([p]);
    expect(c.partitionStatus().map((s) => [s.partition, s.status])).toEqual([[p, 'active']]);
    await c.stop();
  });

  it('answers NOT_COORDINATOR for a group whose partition this broker does not own, and opens nothing for it', async () => {
    const { c, opened } = await coordinator(() => false);
    expect((await commit(c, 'g', 5n)).topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NOT_COORDINATOR);
    expect(opened).toEqual([]);
    await c.stop();
  });

  it('closes the shard of a released partition; the partition\'s groups are then answered NOT_COORDINATOR', async () => {
    let owned = true;
    const { c } = await coordinator(() => owned);
    expect((await commit(c, 'g', 5n)).topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NONE);
    owned = false;
    await c.released(c.partitionFor('g'));
    expect(c.partitionStatus()).toEqual([]);
    expect((await commit(c, 'g', 6n)).topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NOT_COORDINATOR);
    await c.stop();
  });

  it('ListGroups loads every partition this broker owns first, so it lists groups of partitions not used yet', async () => {
    const first = await coordinator();
    expect((await commit(first.c, 'listed', 1n)).topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NONE);
    const list = await first.c.listGroups([], []);
    expect(list.groups.map((g) => g.groupId)).toEqual(['listed']);
    expect(first.opened.sort()).toEqual([0, 1, 2, 3]);
    await first.c.stop();
  });
});
