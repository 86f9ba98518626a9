import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import {
  DescribeTopicPartitionsApi,
  createDescribeTopicPartitionsRequest,
  type DescribeTopicPartitionsRequest,
} from '../../../protocol/messages/075-describe-topic-partitions.gen.js';
import { Writer } from '../../../protocol/wire/writer.js';
import { ZERO_UUID } from '../../../protocol/wire/uuid.js';
import { describeTopicPartitions } from '../../../src/api/075-describe-topic-partitions.js';
import { operationBits, SUPPORTED_OPERATIONS, ResourceType } from '../../../src/security/acl/model.js';

const TOPIC_OPERATIONS = operationBits(SUPPORTED_OPERATIONS.get(ResourceType.TOPIC)!);
import { fakeNodeView, topic } from './node-view-fake.js';

const node = fakeNodeView([topic('b', 3), topic('a', 2), topic('c', 1)], { nodeId: 1, opening: ['c-0'] });

const req = (o: Partial<DescribeTopicPartitionsRequest>): DescribeTopicPartitionsRequest => createDescribeTopicPartitionsRequest({ responsePartitionLimit: 2000, ...o });
const listed = (r: ReturnType<typeof describeTopicPartitions>): string[] => r.topics.flatMap((t) => t.partitions.map((p) => `${t.name}-${p.partitionIndex}`));

describe('DescribeTopicPartitions', () => {
  it('describes every topic in name order with this node as leader, replica and ISR', () => {
    const res = describeTopicPartitions(node, req({ topics: [] }));
    expect(listed(res)).toEqual(['a-0', 'a-1', 'b-0', 'b-1', 'b-2', 'c-0']);
    expect(res.nextCursor).toBeNull();
    expect(res.topics[0]).toMatchObject({ errorCode: 0, name: 'a', topicId: topic('a', 2).topicId, isInternal: false, topicAuthorizedOperations: TOPIC_OPERATIONS });
    expect(res.topics[0]!.partitions[0]).toMatchObject({ leaderId: 1, leaderEpoch: 3, replicaNodes: [1], isrNodes: [1], eligibleLeaderReplicas: [], lastKnownElr: [], offlineReplicas: [] });
  });

  it('reports a partition still opening with no leader and an empty ISR', () => {
    const res = describeTopicPartitions(node, req({ topics: [{ name: 'c' }] }));
    expect(res.topics[0]!.partitions[0]).toMatchObject({ leaderId: -1, isrNodes: [], replicaNodes: [1] });
  });

  it('describes another broker\'s partition as the cluster view gives it: its leader, the epoch it announced, replicas and ISR', () => {
    const member = { ...node, partition: () => ({ leaderId: 2, leaderEpoch: 5, replicas: [2, 1, 3], isr: [2, 1, 3] }) };
    const res = describeTopicPartitions(member, req({ topics: [{ name: 'a' }] }));
    expect(res.topics[0]!.partitions[1]).toMatchObject({ partitionIndex: 1, leaderId: 2, leaderEpoch: 5, replicaNodes: [2, 1, 3], isrNodes: [2, 1, 3] });
  });

  it('pages by the partition limit: a cut topic continues at its next partition, a boundary at the next topic', () => {
    const first = describeTopicPartitions(node, req({ topics: [], responsePartitionLimit: 3 }));
    expect(listed(first)).toEqual(['a-0', 'a-1', 'b-0']);
    expect(first.nextCursor).toMatchObject({ topicName: 'b', partitionIndex: 1 });
    const second = describeTopicPartitions(node, req({ topics: [], responsePartitionLimit: 2, cursor: first.nextCursor }));
    expect(listed(second)).toEqual(['b-1', 'b-2']);
    expect(second.nextCursor).toMatchObject({ topicName: 'c', partitionIndex: 0 });
    const third = describeTopicPartitions(node, req({ topics: [], responsePartitionLimit: 2, cursor: second.nextCursor }));
    expect(listed(third)).toEqual(['c-0']);
    expect(third.nextCursor).toBeNull();
  });

  it('describes at least one partition and at most 2000 (max.request.partition.size.limit)', () => {
    expect(listed(describeTopicPartitions(node, req({ topics: [], responsePartitionLimit: 0 })))).toEqual(['a-0']);
    const big = fakeNodeView([topic('big', 2500)]);
    const res = describeTopicPartitions(big, req({ topics: [], responsePartitionLimit: 1_000_000 }));
    expect(res.topics[0]!.partitions).toHaveLength(2000);
    expect(res.nextCursor).toMatchObject({ topicName: 'big', partitionIndex: 2000 });
  });

  it('answers named topics that do not exist, and only those, with their error', () => {
    const res = describeTopicPartitions(node, req({ topics: [{ name: 'zz' }, { name: 'a' }, { name: 'bad name!' }] }));
    expect(res.topics.map((t) => [t.name, t.errorCode, t.topicId])).toEqual([
      ['a', 0, topic('a', 2).topicId],
      ['bad name!', ErrorCode.INVALID_TOPIC_EXCEPTION, ZERO_UUID],
      ['zz', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ZERO_UUID],
    ]);
  });

  it('refuses a cursor topic missing from the named topics, or a negative cursor partition, with INVALID_REQUEST', () => {
    const missing = describeTopicPartitions(node, req({ topics: [{ name: 'a' }], cursor: { topicName: 'b', partitionIndex: 0 } }));
    expect(missing.topics).toEqual([expect.objectContaining({ name: 'a', errorCode: ErrorCode.INVALID_REQUEST })]);
    const negative = describeTopicPartitions(node, req({ topics: [], cursor: { topicName: 'a', partitionIndex: -1 } }));
    expect(negative.topics).toEqual([]);
    expect(negative.nextCursor).toBeNull();
  });

  it('encodes its answer', () => {
    const res = describeTopicPartitions(node, req({ topics: [], responsePartitionLimit: 3 }));
    expect(() => DescribeTopicPartitionsApi.response.encode(new Writer(), res, 0)).not.toThrow();
  });
});
