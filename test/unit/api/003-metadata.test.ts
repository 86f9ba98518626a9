/** Metadata in-process, over fakes of the node, config, topics and partitions services. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { createMetadataRequest, type MetadataResponse } from '../../../protocol/messages/003-metadata.gen.js';
import { ZERO_UUID } from '../../../protocol/wire/uuid.js';
import { metadata } from '../../../src/api/003-metadata.js';
import { NO_RESPONSE } from '../../../src/api/handler.js';
import { loadConfig } from '../../../src/config.js';
import { FakeTopicsAndPartitions, fakeCluster, fakeNode, requestContext, topicRecord } from './fakes.js';

let world: FakeTopicsAndPartitions;

beforeEach(async () => {
  world = new FakeTopicsAndPartitions();
  // Partition 2 is not open (and, in the view below, has no owner).
  await world.addTopic(topicRecord('orders', 3), [0, 1]);
});

afterEach(() => world.close());

async function send(req: ReturnType<typeof createMetadataRequest>, o: { apiVersion?: number; autoCreate?: boolean } = {}): Promise<MetadataResponse> {
  const config = loadConfig({ overrides: [['auto.create.topics.enable', String(o.autoCreate ?? true)]] });
  const ctx = requestContext(
    {
      node: fakeNode({ nodeId: 3, clusterId: 'c-1', host: 'b3.example', port: 19092 }),
      config,
      topics: world.topicService,
      // orders-2 has no owner.
      cluster: fakeCluster({ nodeId: 3, brokers: [{ nodeId: 3, rack: null, endpoints: [{ listenerName: 'PLAINTEXT', host: 'b3.example', port: 19092 }] }], owned: (t, p) => !(t === 'orders' && p === 2) }),
      partitions: world.partitionService,
    },
    { apiVersion: o.apiVersion ?? 12 },
  );
  const res = await metadata.handle(req, ctx);
  if (res === NO_RESPONSE) throw new Error('no response');
  return res;
}

describe('Metadata handler', () => {
  it('names this node as broker, controller and leader of every open partition, at its advertised address', async () => {
    const res = await send(createMetadataRequest({ topics: null }));
    expect(res.brokers).toEqual([expect.objectContaining({ nodeId: 3, host: 'b3.example', port: 19092 })]);
    expect(res).toMatchObject({ clusterId: 'c-1', controllerId: 3 });
    const [t] = res.topics;
    expect(t).toMatchObject({ name: 'orders', errorCode: ErrorCode.NONE, isInternal: false });
    expect(t!.partitions.slice(0, 2)).toEqual([
      expect.objectContaining({ partitionIndex: 0, errorCode: ErrorCode.NONE, leaderId: 3, replicaNodes: [3], isrNodes: [3] }),
      expect.objectContaining({ partitionIndex: 1, errorCode: ErrorCode.NONE, leaderId: 3 }),
    ]);
  });

  it('reports a partition no broker owns as LEADER_NOT_AVAILABLE without a leader', async () => {
    const res = await send(createMetadataRequest({ topics: null }));
    expect(res.topics[0]!.partitions[2]).toMatchObject({ partitionIndex: 2, errorCode: ErrorCode.LEADER_NOT_AVAILABLE, leaderId: -1, isrNodes: [] });
  });

  it('auto-creates a named topic when allowed, and not when auto.create.topics.enable is false', async () => {
    const off = await send(createMetadataRequest({ topics: [{ name: 'fresh', topicId: ZERO_UUID }] }), { autoCreate: false });
    expect(off.topics[0]).toMatchObject({ name: 'fresh', errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION });
    expect(world.created).toEqual([]);
    const on = await send(createMetadataRequest({ topics: [{ name: 'fresh', topicId: ZERO_UUID }] }));
    expect(world.created).toEqual(['fresh']);
    expect(on.topics[0]).toMatchObject({ name: 'fresh', errorCode: ErrorCode.NONE });
  });

  it('answers INVALID_TOPIC_EXCEPTION for a name that cannot be a topic, creating nothing', async () => {
    const res = await send(createMetadataRequest({ topics: [{ name: 'bad name!', topicId: ZERO_UUID }] }));
    expect(res.topics[0]).toMatchObject({ name: 'bad name!', errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION });
    expect(world.created).toEqual([]);
  });
});
