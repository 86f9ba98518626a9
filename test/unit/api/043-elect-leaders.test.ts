import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { ElectLeadersApi, createElectLeadersRequest } from '../../../protocol/messages/043-elect-leaders.gen.js';
import { Writer } from '../../../protocol/wire/writer.js';
import { electLeaders } from '../../../src/api/043-elect-leaders.js';
import { fakeNodeView, topic } from './node-view-fake.js';

const node = fakeNodeView([topic('orders', 2), topic('audit', 1)]);

describe('ElectLeaders on one node', () => {
  it('answers ELECTION_NOT_NEEDED for each named partition, whose only replica already leads', () => {
    for (const electionType of [0, 1]) {
      const res = electLeaders(node, createElectLeadersRequest({ electionType, topicPartitions: [{ topic: 'orders', partitions: [0, 1] }] }), 2);
      expect(res.errorCode).toBe(ErrorCode.NONE);
      expect(res.replicaElectionResults).toEqual([
        expect.objectContaining({
          topic: 'orders',
          partitionResult: [0, 1].map((p) => expect.objectContaining({ partitionId: p, errorCode: ErrorCode.ELECTION_NOT_NEEDED, errorMessage: 'Leader election not needed for topic partition.' })),
        }),
      ]);
    }
  });

  it('answers UNKNOWN_TOPIC_OR_PARTITION with Kafka’s message for a topic or partition that does not exist', () => {
    const res = electLeaders(node, createElectLeadersRequest({ topicPartitions: [{ topic: 'nope', partitions: [0] }, { topic: 'audit', partitions: [1] }] }), 1);
    expect(res.replicaElectionResults.map((r) => r.partitionResult[0])).toEqual([
      expect.objectContaining({ errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'No such topic as nope' }),
      expect.objectContaining({ errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'No such partition as audit-1' }),
    ]);
  });

  it('lists every topic with no partitions when asked for all partitions, as Kafka leaves out those needing no election', () => {
    const res = electLeaders(node, createElectLeadersRequest({ topicPartitions: null }), 2);
    expect(res.replicaElectionResults.map((r) => [r.topic, r.partitionResult.length])).toEqual([['audit', 0], ['orders', 0]]);
  });

  it('refuses an unknown election type with INVALID_REQUEST for each partition', () => {
    const res = electLeaders(node, createElectLeadersRequest({ electionType: 7, topicPartitions: [{ topic: 'orders', partitions: [0] }] }), 1);
    expect(res.errorCode).toBe(ErrorCode.INVALID_REQUEST);
    expect(res.replicaElectionResults[0]!.partitionResult[0]).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Unknown election type 7' });
  });

  it('encodes its answer in every version it serves (v0 has no election type: preferred)', () => {
    for (let v = 0; v <= 2; v++) {
      const res = electLeaders(node, createElectLeadersRequest({ electionType: 9, topicPartitions: [{ topic: 'orders', partitions: [0] }] }), v);
      if (v === 0) expect(res.replicaElectionResults[0]!.partitionResult[0]!.errorCode).toBe(ErrorCode.ELECTION_NOT_NEEDED);
      expect(() => ElectLeadersApi.response.encode(new Writer(), res, v)).not.toThrow();
    }
  });
});
