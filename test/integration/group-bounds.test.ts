/**
 * Client-chosen strings the group coordinator keeps, over the wire against a real broker: a group id longer
 * than a non-flexible string can carry (32,767 bytes) enters only through flexible versions, and must never
 * be kept where it would break persistence or other clients' non-flexible responses (ListGroups v0-2); a
 * client id of 32,767 bytes must still give a member id a JoinGroup v4 client can read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../protocol/error-codes.js';
import { ConsumerGroupHeartbeatApi, createConsumerGroupHeartbeatRequest } from '../../protocol/messages/068-consumer-group-heartbeat.gen.js';
import { CreateTopicsApi, createCreateTopicsRequest, createCreateTopicsRequestCreatableTopic } from '../../protocol/messages/019-create-topics.gen.js';
import { JoinGroupApi, createJoinGroupRequest, createJoinGroupRequestProtocol, type JoinGroupRequest } from '../../protocol/messages/011-join-group.gen.js';
import { ListGroupsApi, createListGroupsRequest } from '../../protocol/messages/016-list-groups.gen.js';
import { OffsetCommitApi, createOffsetCommitRequest, createOffsetCommitRequestPartition, createOffsetCommitRequestTopic } from '../../protocol/messages/008-offset-commit.gen.js';
import { BrokerProcess } from '../support/broker-process.js';
import { RawConnection, waitFor } from '../support/raw-connection.js';

const HUGE_GROUP = 'g'.repeat(40_000);
const UUID_SUFFIX = /-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function join(groupId: string, init: Partial<JoinGroupRequest> = {}): JoinGroupRequest {
  return createJoinGroupRequest({
    groupId,
    sessionTimeoutMs: 10_000,
    rebalanceTimeoutMs: 10_000,
    protocolType: 'consumer',
    protocols: [createJoinGroupRequestProtocol({ name: 'range', metadata: Buffer.alloc(0) })],
    ...init,
  });
}

describe.sequential('strings kept by the group coordinator', () => {
  let broker: BrokerProcess;
  let conn: RawConnection;

  beforeAll(async () => {
    broker = await BrokerProcess.start();
    conn = await RawConnection.connect(broker.port);
    const created = await conn.request(
      CreateTopicsApi,
      7,
      createCreateTopicsRequest({ topics: [createCreateTopicsRequestCreatableTopic({ name: 'bounded', numPartitions: 1, replicationFactor: 1 })], timeoutMs: 30_000 }),
    );
    expect(created.topics[0]!.errorCode).toBe(ErrorCode.NONE);
    // A plain group for the listings to show.
    const committed = await conn.request(
      OffsetCommitApi,
      2,
      createOffsetCommitRequest({
        groupId: 'plain-group',
        generationIdOrMemberEpoch: -1,
        retentionTimeMs: -1n,
        topics: [createOffsetCommitRequestTopic({ name: 'bounded', partitions: [createOffsetCommitRequestPartition({ partitionIndex: 0, committedOffset: 1n })] })],
      }),
    );
    expect(committed.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NONE);
  });

  afterAll(async () => {
    conn?.destroy();
    await broker?.stop();
  });

  it('refuses a 40,000-byte group id in ConsumerGroupHeartbeat v0 and JoinGroup v6 with INVALID_GROUP_ID, and ListGroups v0-2 from another client still answer', async () => {
    const hb = await conn.request(
      ConsumerGroupHeartbeatApi,
      0,
      createConsumerGroupHeartbeatRequest({ groupId: HUGE_GROUP, memberId: '', memberEpoch: 0, rebalanceTimeoutMs: 30_000, subscribedTopicNames: ['bounded'], topicPartitions: [] }),
    );
    expect(hb.errorCode).toBe(ErrorCode.INVALID_GROUP_ID);
    const joined = await conn.request(JoinGroupApi, 6, join(HUGE_GROUP));
    expect(joined.errorCode).toBe(ErrorCode.INVALID_GROUP_ID);
    // The same id in OffsetCommit v8 (flexible), which would make a simple group of it.
    const commit = await conn.request(
      OffsetCommitApi,
      8,
      createOffsetCommitRequest({
        groupId: HUGE_GROUP,
        generationIdOrMemberEpoch: -1,
        topics: [createOffsetCommitRequestTopic({ name: 'bounded', partitions: [createOffsetCommitRequestPartition({ partitionIndex: 0, committedOffset: 1n })] })],
      }),
    );
    expect(commit.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.INVALID_GROUP_ID);

    const other = await RawConnection.connect(broker.port);
    try {
      for (const v of [0, 1, 2, 3]) {
        const listed = await other.request(ListGroupsApi, v, createListGroupsRequest({}));
        expect(listed.errorCode).toBe(ErrorCode.NONE);
        expect(listed.groups.map((g) => g.groupId)).toContain('plain-group');
        expect(listed.groups.map((g) => g.groupId.length)).not.toContain(40_000);
      }
      expect(other.isClosed).toBe(false);
    } finally {
      other.destroy();
    }
  });

  it('refuses a 40,000-byte group instance id or protocol name in JoinGroup v6 (they would reach v5 members of the group) with INVALID_REQUEST', async () => {
    expect((await conn.request(JoinGroupApi, 6, join('static-group', { groupInstanceId: 'i'.repeat(40_000) }))).errorCode).toBe(ErrorCode.INVALID_REQUEST);
    expect(
      (await conn.request(JoinGroupApi, 6, join('proto-group', { protocols: [createJoinGroupRequestProtocol({ name: 'p'.repeat(40_000), metadata: Buffer.alloc(0) })] }))).errorCode,
    ).toBe(ErrorCode.INVALID_REQUEST);
  });

  it('gives a JoinGroup v4 client with a 32,767-byte client id a member id it can read (client id cut, UUID kept), and lets it join with it', async () => {
    const clientId = 'c'.repeat(0x7fff);
    const c = await RawConnection.connect(broker.port);
    try {
      const id1 = c.send(JoinGroupApi, 4, join('long-client-group'), undefined, clientId);
      const first = await c.receive(JoinGroupApi, 4, id1);
      expect(first.errorCode).toBe(ErrorCode.MEMBER_ID_REQUIRED);
      expect(Buffer.byteLength(first.memberId, 'utf8')).toBeLessThanOrEqual(0x7fff);
      expect(first.memberId).toMatch(UUID_SUFFIX);
      expect(first.memberId.startsWith('ccc')).toBe(true);
      const id2 = c.send(JoinGroupApi, 4, join('long-client-group', { memberId: first.memberId }), undefined, clientId);
      // The group's first rebalance waits group.initial.rebalance.delay.ms (3 s) before it answers.
      const second = await c.receive(JoinGroupApi, 4, id2, 20_000);
      expect([second.errorCode, second.memberId, second.leader]).toEqual([ErrorCode.NONE, first.memberId, first.memberId]);
      const listed = await waitFor('the group to be listed', async () => (await conn.request(ListGroupsApi, 2, createListGroupsRequest({}))).groups.find((g) => g.groupId === 'long-client-group'));
      expect(listed.protocolType).toBe('consumer');
    } finally {
      c.destroy();
    }
  });
});
