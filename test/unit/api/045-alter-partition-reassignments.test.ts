import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { AlterPartitionReassignmentsApi, createAlterPartitionReassignmentsRequest } from '../../../protocol/messages/045-alter-partition-reassignments.gen.js';
import { Writer } from '../../../protocol/wire/writer.js';
import { alterPartitionReassignments } from '../../../src/api/045-alter-partition-reassignments.js';
import { listPartitionReassignmentsHandler } from '../../../src/api/046-list-partition-reassignments.js';
import { createListPartitionReassignmentsRequest } from '../../../protocol/messages/046-list-partition-reassignments.gen.js';
import { requestContext } from './fakes.js';
import { fakeNodeView, topic } from './node-view-fake.js';

const node = fakeNodeView([topic('orders', 2)], { nodeId: 1 });

function outcome(replicas: number[] | null, o: { topic?: string; partition?: number; version?: number; allowReplicationFactorChange?: boolean } = {}) {
  const req = createAlterPartitionReassignmentsRequest({
    allowReplicationFactorChange: o.allowReplicationFactorChange ?? true,
    topics: [{ name: o.topic ?? 'orders', partitions: [{ partitionIndex: o.partition ?? 0, replicas }] }],
  });
  const res = alterPartitionReassignments(node, req, o.version ?? 1);
  return res.responses[0]!.partitions[0]!;
}

describe('AlterPartitionReassignments on one node', () => {
  it('refuses a target naming another broker with INVALID_REPLICA_ASSIGNMENT and Kafka’s message', () => {
    expect(outcome([1, 2])).toMatchObject({ errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT, errorMessage: 'The manual partition assignment includes broker 2, but no such broker is registered.' });
    expect(outcome([3])).toMatchObject({ errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT });
  });

  it('refuses an empty target and a broker named twice', () => {
    expect(outcome([])).toMatchObject({ errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT, errorMessage: 'The manual partition assignment includes an empty replica list.' });
    expect(outcome([1, 1])).toMatchObject({ errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT, errorMessage: 'The manual partition assignment includes the broker 1 more than once.' });
  });

  it('answers a cancellation with NO_REASSIGNMENT_IN_PROGRESS, since none ever is', () => {
    expect(outcome(null)).toMatchObject({ errorCode: ErrorCode.NO_REASSIGNMENT_IN_PROGRESS });
  });

  it('answers unknown topics and partitions with UNKNOWN_TOPIC_OR_PARTITION', () => {
    expect(outcome([1], { topic: 'nope' })).toMatchObject({ errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'Unable to find a topic named nope.' });
    expect(outcome([1], { partition: 5 })).toMatchObject({ errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'Unable to find partition orders:5.' });
  });

  it('accepts the assignment the partition already has, a reassignment that changes nothing', () => {
    expect(outcome([1])).toMatchObject({ errorCode: ErrorCode.NONE, errorMessage: null });
  });

  it('v1: echoes allowReplicationFactorChange and, when false, orders checks as Kafka does', () => {
    const res = alterPartitionReassignments(node, createAlterPartitionReassignmentsRequest({ allowReplicationFactorChange: false, topics: [] }), 1);
    expect(res.allowReplicationFactorChange).toBe(false);
    expect(outcome([1], { allowReplicationFactorChange: false })).toMatchObject({ errorCode: ErrorCode.NONE });
    // v0 has no such field: a change of replication factor is allowed, and the broker check decides.
    expect(outcome([1, 2], { version: 0, allowReplicationFactorChange: false })).toMatchObject({ errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT });
  });

  it('encodes its answers in v0 and v1', () => {
    for (const v of [0, 1]) {
      const res = alterPartitionReassignments(node, createAlterPartitionReassignmentsRequest({ topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, replicas: [2] }] }] }), v);
      expect(() => AlterPartitionReassignmentsApi.response.encode(new Writer(), res, v)).not.toThrow();
    }
  });
});

describe('ListPartitionReassignments on one node', () => {
  it('lists no reassignment, for every topic or the ones named', async () => {
    const ctx = requestContext({}, { apiVersion: 0 });
    for (const topics of [null, [{ name: 'orders', partitionIndexes: [0] }]]) {
      const res = await listPartitionReassignmentsHandler.handle(createListPartitionReassignmentsRequest({ topics }), ctx);
      expect(res).toMatchObject({ errorCode: ErrorCode.NONE, errorMessage: null, topics: [] });
    }
  });
});
