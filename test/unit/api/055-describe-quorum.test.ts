import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { DescribeQuorumApi, createDescribeQuorumRequest } from '../../../protocol/messages/055-describe-quorum.gen.js';
import { Writer } from '../../../protocol/wire/writer.js';
import { describeQuorum, describeQuorumHandler } from '../../../src/api/055-describe-quorum.js';
import { fakeCluster, fakeNode, requestContext } from './fakes.js';
import { fakeNodeView } from './node-view-fake.js';

const metadataPartition = createDescribeQuorumRequest({ topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0 }] }] });

describe('DescribeQuorum', () => {
  it('describes this node as the only voter and leader of __cluster_metadata-0, with its directory id, fetched and caught up with itself now', () => {
    const res = describeQuorum(fakeNodeView([], { nodeId: 4 }), metadataPartition, 2, 1_700_000_000_000);
    expect(res.errorCode).toBe(ErrorCode.NONE);
    const p = res.topics[0]!.partitions[0]!;
    expect(res.topics[0]!.topicName).toBe('__cluster_metadata');
    expect(p).toMatchObject({ partitionIndex: 0, errorCode: 0, leaderId: 4, leaderEpoch: 1, highWatermark: 0n, observers: [] });
    expect(p.currentVoters).toEqual([expect.objectContaining({ replicaId: 4, replicaDirectoryId: 'ZGlyZWN0b3J5LWlkLTAwMA', logEndOffset: 0n, lastFetchTimestamp: 1_700_000_000_000n, lastCaughtUpTimestamp: 1_700_000_000_000n })]);
    expect(res.nodes).toEqual([expect.objectContaining({ nodeId: 4, listeners: [expect.objectContaining({ name: 'PLAINTEXT', host: 'broker.example', port: 9092 })] })]);
  });

  it('answers any other partition with UNKNOWN_TOPIC_OR_PARTITION, as a KRaft node does for a partition not its log', () => {
    const res = describeQuorum(fakeNodeView([]), createDescribeQuorumRequest({ topics: [{ topicName: 'orders', partitions: [{ partitionIndex: 0 }, { partitionIndex: 1 }] }] }), 2, 0);
    expect(res.topics[0]!.partitions.map((p) => p.errorCode)).toEqual([ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
  });

  it('is served through the handler with the listener the request came in on, and encodes in v0-2', async () => {
    const ctx = requestContext({ node: fakeNode({ nodeId: 2, port: 19092 }), topics: { list: () => [], get: () => undefined } as never, partitions: {} as never, cluster: fakeCluster({ nodeId: 2 }) }, { apiVersion: 2, listenerName: 'EXTERNAL' });
    const res = await describeQuorumHandler.handle(metadataPartition, ctx);
    expect(res).toMatchObject({ nodes: [{ nodeId: 2, listeners: [{ name: 'EXTERNAL', port: 19092 }] }] });
    for (let v = 0; v <= 2; v++) {
      const at = await describeQuorumHandler.handle(metadataPartition, { ...ctx, apiVersion: v });
      expect(() => DescribeQuorumApi.response.encode(new Writer(), at as never, v)).not.toThrow();
    }
  });

  it('names the controller listeners as the voter endpoints when the node has them (controller.listener.names), whatever listener asked', async () => {
    const ctx = requestContext({ node: fakeNode({ nodeId: 2, port: 19093, controllerListeners: ['CONTROLLER'] }), topics: { list: () => [], get: () => undefined } as never, partitions: {} as never, cluster: fakeCluster({ nodeId: 2 }) }, { apiVersion: 2, listenerName: 'PLAINTEXT' });
    const res = await describeQuorumHandler.handle(metadataPartition, ctx);
    expect(res).toMatchObject({ nodes: [{ nodeId: 2, listeners: [{ name: 'CONTROLLER', host: 'broker.example', port: 19093 }] }] });
  });
});
