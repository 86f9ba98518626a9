import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { createOffsetCommitRequest, createOffsetCommitRequestPartition, createOffsetCommitRequestTopic, type OffsetCommitRequest } from '../../../protocol/messages/008-offset-commit.gen.js';
import { createOffsetFetchRequestGroup, createOffsetFetchRequestTopics } from '../../../protocol/messages/009-offset-fetch.gen.js';
import { createLeaveGroupRequestMemberIdentity } from '../../../protocol/messages/013-leave-group.gen.js';
import { createOffsetDeleteRequestPartition, createOffsetDeleteRequestTopic } from '../../../protocol/messages/047-offset-delete.gen.js';
import type { JoinGroupResponse } from '../../../protocol/messages/011-join-group.gen.js';
import { assignmentBytes, consumerGroupHeartbeat, harness, info, joinRequest, startJoin, sync, type Harness } from './harness.js';

const G = 'offsets-group';

function commit(h: Harness, init: Partial<OffsetCommitRequest>, parts: Record<string, Array<[number, bigint, string?]>>, apiVersion = 8) {
  return h.coordinator.commitOffsets(
    createOffsetCommitRequest({
      groupId: G,
      ...init,
      topics: Object.entries(parts).map(([name, ps]) =>
        createOffsetCommitRequestTopic({
          name,
          partitions: ps.map(([partitionIndex, committedOffset, committedMetadata]) =>
            createOffsetCommitRequestPartition({ partitionIndex, committedOffset, committedLeaderEpoch: 3, committedMetadata: committedMetadata ?? 'meta' }),
          ),
        }),
      ),
    }),
    apiVersion,
  );
}

function fetch(h: Harness, topics: Record<string, number[]> | null, groupId = G) {
  return h.coordinator.fetchOffsets(
    createOffsetFetchRequestGroup({
      groupId,
      topics: topics === null ? null : Object.entries(topics).map(([name, partitionIndexes]) => createOffsetFetchRequestTopics({ name, partitionIndexes })),
    }),
  );
}

function codes(r: { topics: Array<{ name: string; partitions: Array<{ partitionIndex: number; errorCode: number }> }> }): Record<string, number[]> {
  return Object.fromEntries(r.topics.map((t) => [t.name, t.partitions.map((p) => p.errorCode)]));
}

async function stableMember(h: Harness): Promise<JoinGroupResponse> {
  const j = await startJoin(h, G);
  await h.advance(3000);
  const r = await j.result;
  await (await sync(h, G, r, { [r.memberId]: assignmentBytes({ t: [0, 1] }) })).result;
  return r;
}

describe('offset commits and fetches', () => {
  it('stores offsets committed without group management in a simple group (generation -1)', async () => {
    const h = await harness();
    h.topics.add('t', 4);
    const r = await commit(h, {}, { t: [[0, 10n], [3, 42n, 'hello']] });
    expect(codes(r)).toEqual({ t: [0, 0] });
    const f = await fetch(h, { t: [0, 1, 3] });
    expect(f.errorCode).toBe(ErrorCode.NONE);
    expect(f.topics[0]!.partitions.map((p) => [p.committedOffset, p.committedLeaderEpoch, p.metadata])).toEqual([
      [10n, 3, 'meta'],
      [-1n, -1, ''],
      [42n, 3, 'hello'],
    ]);
    const listed = await h.coordinator.listGroups([], []);
    expect(listed.groups.find((g) => g.groupId === G)).toMatchObject({ protocolType: '', groupState: 'Empty', groupType: 'classic' });
  });

  it('answers unknown topics and partitions with UNKNOWN_TOPIC_OR_PARTITION and commits the rest', async () => {
    const h = await harness();
    h.topics.add('t', 2);
    const r = await commit(h, {}, { t: [[0, 1n], [5, 1n]], nope: [[0, 1n]] });
    expect(codes(r)).toEqual({ t: [0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION], nope: [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION] });
  });

  it('rejects metadata longer than offset.metadata.max.bytes', async () => {
    const h = await harness({ offsetMetadataMaxBytes: 5 });
    h.topics.add('t', 2);
    const r = await commit(h, {}, { t: [[0, 1n, '123456'], [1, 1n, '12345']] });
    expect(codes(r)).toEqual({ t: [ErrorCode.OFFSET_METADATA_TOO_LARGE, ErrorCode.NONE] });
  });

  it('checks the member and generation of a group member commit', async () => {
    const h = await harness();
    h.topics.add('t', 2);
    const m = await stableMember(h);
    const ok = await commit(h, { memberId: m.memberId, generationIdOrMemberEpoch: m.generationId }, { t: [[0, 5n]] });
    const wrongGeneration = await commit(h, { memberId: m.memberId, generationIdOrMemberEpoch: 9 }, { t: [[0, 5n]] });
    const unknownMember = await commit(h, { memberId: 'ghost', generationIdOrMemberEpoch: m.generationId }, { t: [[0, 5n]] });
    const noMemberNonEmpty = await commit(h, {}, { t: [[0, 5n]] });
    expect(codes(ok)).toEqual({ t: [ErrorCode.NONE] });
    expect(codes(wrongGeneration)).toEqual({ t: [ErrorCode.ILLEGAL_GENERATION] });
    expect(codes(unknownMember)).toEqual({ t: [ErrorCode.UNKNOWN_MEMBER_ID] });
    expect(codes(noMemberNonEmpty)).toEqual({ t: [ErrorCode.UNKNOWN_MEMBER_ID] });
  });

  it('answers a generation for a group that does not exist with ILLEGAL_GENERATION before v9 and GROUP_ID_NOT_FOUND from v9', async () => {
    const h = await harness();
    h.topics.add('t', 1);
    expect(codes(await commit(h, { memberId: 'm', generationIdOrMemberEpoch: 1 }, { t: [[0, 1n]] }, 8))).toEqual({ t: [ErrorCode.ILLEGAL_GENERATION] });
    expect(codes(await commit(h, { memberId: 'm', generationIdOrMemberEpoch: 1 }, { t: [[0, 1n]] }, 9))).toEqual({ t: [ErrorCode.GROUP_ID_NOT_FOUND] });
  });

  it('answers REBALANCE_IN_PROGRESS to a commit while the group awaits its assignment', async () => {
    const h = await harness();
    h.topics.add('t', 1);
    const j = await startJoin(h, G);
    await h.advance(3000);
    const r = await j.result;
    expect(codes(await commit(h, { memberId: r.memberId, generationIdOrMemberEpoch: r.generationId }, { t: [[0, 1n]] }))).toEqual({ t: [ErrorCode.REBALANCE_IN_PROGRESS] });
  });

  it('returns every committed offset of a group when no topics are given', async () => {
    const h = await harness();
    h.topics.add('a', 2);
    h.topics.add('b', 1);
    await commit(h, {}, { a: [[1, 7n], [0, 6n]], b: [[0, 9n]] });
    const f = await fetch(h, null);
    const got = Object.fromEntries(f.topics.map((t) => [t.name, t.partitions.map((p) => [p.partitionIndex, p.committedOffset])]));
    expect(got).toEqual({ a: [[0, 6n], [1, 7n]], b: [[0, 9n]] });
    expect((await fetch(h, null, 'unknown')).topics).toEqual([]);
  });

  it('returns -1 for a group that does not exist', async () => {
    const h = await harness();
    const f = await fetch(h, { t: [0] }, 'missing');
    expect(f.errorCode).toBe(ErrorCode.NONE);
    expect(f.topics[0]!.partitions[0]!.committedOffset).toBe(-1n);
  });

  it('keeps a member alive through its offset commits (they count as heartbeats)', async () => {
    const h = await harness();
    h.topics.add('t', 2);
    const m = await stableMember(h);
    for (let i = 0; i < 5; i++) {
      await h.advance(6000);
      await commit(h, { memberId: m.memberId, generationIdOrMemberEpoch: m.generationId }, { t: [[0, BigInt(i)]] });
    }
    const g = (await h.coordinator.describeGroups([G], 5))[0]!;
    expect(g.groupState).toBe('Stable');
    expect(g.members.map((x) => x.memberId)).toEqual([m.memberId]);
  });
});

describe('offset retention', () => {
  it('expires the offsets of an empty group offsets.retention.minutes after it became empty, then deletes the group', async () => {
    const h = await harness({ offsetsRetentionMs: 60_000, offsetsRetentionCheckIntervalMs: 10_000 });
    h.topics.add('t', 1);
    const m = await stableMember(h);
    await commit(h, { memberId: m.memberId, generationIdOrMemberEpoch: m.generationId }, { t: [[0, 5n]] });
    await h.coordinator.leaveGroup(G, [createLeaveGroupRequestMemberIdentity({ memberId: m.memberId })]);
    await h.advance(50_000);
    expect((await fetch(h, { t: [0] })).topics[0]!.partitions[0]!.committedOffset).toBe(5n);
    await h.advance(20_000);
    expect((await fetch(h, { t: [0] })).topics[0]!.partitions[0]!.committedOffset).toBe(-1n);
    expect((await h.coordinator.describeGroups([G], 5))[0]!.groupState).toBe('Dead');
  });

  it('keeps offsets of topics a Stable group subscribes to', async () => {
    const h = await harness({ offsetsRetentionMs: 60_000, offsetsRetentionCheckIntervalMs: 10_000 });
    h.topics.add('t', 1);
    h.topics.add('old', 1);
    const m = await stableMember(h);
    await commit(h, { memberId: m.memberId, generationIdOrMemberEpoch: m.generationId }, { t: [[0, 5n]], old: [[0, 8n]] });
    for (let i = 0; i < 8; i++) {
      await h.advance(9000);
      await h.coordinator.heartbeat({ groupId: G, generationId: m.generationId, memberId: m.memberId, groupInstanceId: null });
    }
    const f = await fetch(h, { t: [0], old: [0] });
    // The member subscribes to "t" only (harness subscription): "old" expired a minute after its commit.
    expect(f.topics.map((t) => t.partitions[0]!.committedOffset)).toEqual([5n, -1n]);
  });

  it('honours the retention time of OffsetCommit v2-4', async () => {
    const h = await harness({ offsetsRetentionMs: 3_600_000, offsetsRetentionCheckIntervalMs: 1000 });
    h.topics.add('t', 1);
    await commit(h, { retentionTimeMs: 5000n }, { t: [[0, 3n]] }, 2);
    await h.advance(6000);
    expect((await fetch(h, { t: [0] })).topics[0]!.partitions[0]!.committedOffset).toBe(-1n);
  });

  it('keeps an offset committed with a retention of Long.MAX_VALUE: the record is written, survives a restart and never expires', async () => {
    const h = await harness({ offsetsRetentionMs: 3_600_000, offsetsRetentionCheckIntervalMs: 1000 });
    h.topics.add('t', 1);
    const r = await commit(h, { retentionTimeMs: 2n ** 63n - 1n }, { t: [[0, 7n]] }, 2);
    expect(codes(r)).toEqual({ t: [ErrorCode.NONE] });
    await h.advance(7_200_000);
    expect((await fetch(h, { t: [0] })).topics[0]!.partitions[0]!.committedOffset).toBe(7n);
    await h.restart();
    await h.advance(0);
    expect((await fetch(h, { t: [0] })).topics[0]!.partitions[0]!.committedOffset).toBe(7n);
  });

  it('removes the offsets of a deleted topic from every group', async () => {
    const h = await harness();
    h.topics.add('gone', 1);
    h.topics.add('kept', 1);
    await commit(h, {}, { gone: [[0, 1n]], kept: [[0, 2n]] });
    h.topics.remove('gone');
    await h.advance(0);
    const f = await fetch(h, null);
    expect(f.topics.map((t) => t.name)).toEqual(['kept']);
  });
});

describe('OffsetDelete and DeleteGroups', () => {
  it('deletes offsets of an empty group, and refuses topics a consumer group subscribes to', async () => {
    const h = await harness();
    h.topics.add('t', 2);
    h.topics.add('u', 1);
    await commit(h, {}, { t: [[0, 1n], [1, 2n]], u: [[0, 3n]] });
    const r = await h.coordinator.deleteOffsets(G, [createOffsetDeleteRequestTopic({ name: 't', partitions: [createOffsetDeleteRequestPartition({ partitionIndex: 1 })] })]);
    expect(r.errorCode).toBe(ErrorCode.NONE);
    expect(codes(r)).toEqual({ t: [0] });
    expect((await fetch(h, { t: [0, 1] })).topics[0]!.partitions.map((p) => p.committedOffset)).toEqual([1n, -1n]);

    const m = await (async () => {
      await h.coordinator.deleteGroups([G]);
      return stableMember(h);
    })();
    expect(m.errorCode).toBe(ErrorCode.NONE);
    const subscribed = await h.coordinator.deleteOffsets(G, [createOffsetDeleteRequestTopic({ name: 't', partitions: [createOffsetDeleteRequestPartition({ partitionIndex: 0 })] })]);
    expect(codes(subscribed)).toEqual({ t: [ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC] });
    const missing = await h.coordinator.deleteOffsets('missing', [createOffsetDeleteRequestTopic({ name: 't', partitions: [createOffsetDeleteRequestPartition({ partitionIndex: 0 })] })]);
    expect(missing.errorCode).toBe(ErrorCode.GROUP_ID_NOT_FOUND);
  });

  it('refuses OffsetDelete on a non-empty group that does not use the consumer protocol', async () => {
    const h = await harness();
    h.topics.add('t', 1);
    const j = await startJoin(h, G, { protocolType: 'connect' });
    await h.advance(3000);
    await j.result;
    const r = await h.coordinator.deleteOffsets(G, [createOffsetDeleteRequestTopic({ name: 't', partitions: [createOffsetDeleteRequestPartition({ partitionIndex: 0 })] })]);
    expect(r.errorCode).toBe(ErrorCode.NON_EMPTY_GROUP);
  });

  it('deletes an empty group with its offsets and refuses non-empty and unknown groups', async () => {
    const h = await harness();
    h.topics.add('t', 1);
    await commit(h, {}, { t: [[0, 1n]] });
    const j = await startJoin(h, 'busy');
    await h.advance(3000);
    await j.result;
    const r = await h.coordinator.deleteGroups([G, 'busy', 'missing', G]);
    expect(r.map((x) => [x.groupId, x.errorCode])).toEqual([
      [G, ErrorCode.NONE],
      ['busy', ErrorCode.NON_EMPTY_GROUP],
      ['missing', ErrorCode.GROUP_ID_NOT_FOUND],
    ]);
    expect((await fetch(h, { t: [0] })).topics[0]!.partitions[0]!.committedOffset).toBe(-1n);
    expect((await h.coordinator.describeGroups([G], 5))[0]!.groupState).toBe('Dead');
  });

  it('answers GROUP_ID_NOT_FOUND with a message from DescribeGroups v6 on, for unknown, deleted and KIP-848 groups', async () => {
    const h = await harness();
    h.topics.add('t', 1);
    await commit(h, {}, { t: [[0, 1n]] });
    await h.coordinator.deleteGroups([G]);
    await consumerGroupHeartbeat(h, 'kip848', { memberId: 'm-1', rebalanceTimeoutMs: 1000, subscribedTopicNames: ['t'], topicPartitions: [] });
    const v6 = await h.coordinator.describeGroups(['missing', G, 'kip848'], 6);
    expect(v6.map((d) => [d.groupId, d.errorCode, d.errorMessage, d.groupState])).toEqual([
      ['missing', ErrorCode.GROUP_ID_NOT_FOUND, 'Group missing not found.', 'Dead'],
      [G, ErrorCode.GROUP_ID_NOT_FOUND, `Group ${G} not found.`, 'Dead'],
      ['kip848', ErrorCode.GROUP_ID_NOT_FOUND, 'Group kip848 is not a classic group.', 'Dead'],
    ]);
    const v5 = await h.coordinator.describeGroups(['missing', G, 'kip848'], 5);
    expect(v5.map((d) => [d.errorCode, d.errorMessage, d.groupState])).toEqual([
      [ErrorCode.NONE, null, 'Dead'],
      [ErrorCode.NONE, null, 'Dead'],
      [ErrorCode.NONE, null, 'Dead'],
    ]);
  });
});

describe('DescribeGroups and ListGroups', () => {
  it('describes a Stable group with member metadata and assignments, and other states without metadata', async () => {
    const h = await harness();
    const m = await stableMember(h);
    const [d] = await h.coordinator.describeGroups([G], 5);
    expect(d).toMatchObject({ groupId: G, errorCode: 0, groupState: 'Stable', protocolType: 'consumer', protocolData: 'range' });
    expect(d!.members[0]!.memberId).toBe(m.memberId);
    expect(d!.members[0]!.clientId).toBe('consumer-1');
    expect(d!.members[0]!.memberMetadata.length).toBeGreaterThan(0);
    expect(d!.members[0]!.memberAssignment).toEqual(assignmentBytes({ t: [0, 1] }));
    // The only member (the leader) rejoins: a new generation awaits its assignment.
    await h.coordinator.joinGroup(joinRequest(G, { memberId: m.memberId }), info(9));
    const [rebalancing] = await h.coordinator.describeGroups([G], 5);
    expect(rebalancing!.groupState).toBe('CompletingRebalance');
    expect(rebalancing!.protocolData).toBe('');
    expect(rebalancing!.members[0]!.memberMetadata.length).toBe(0);
  });

  it('filters ListGroups by state (v4) and type (v5), case-insensitively', async () => {
    const h = await harness();
    h.topics.add('t', 1);
    await stableMember(h);
    await commit(h, { groupId: 'simple' }, { t: [[0, 1n]] });
    const all = await h.coordinator.listGroups([], []);
    expect(all.groups.map((g) => g.groupId).sort()).toEqual([G, 'simple']);
    expect((await h.coordinator.listGroups(['STABLE'], [])).groups.map((g) => g.groupId)).toEqual([G]);
    expect((await h.coordinator.listGroups([], ['Consumer'])).groups).toEqual([]);
    expect((await h.coordinator.listGroups([], ['classic'])).groups.length).toBe(2);
  });
});
