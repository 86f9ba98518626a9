import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { MetadataApi } from '../../../protocol/messages/003-metadata.gen.js';
import type { MetadataRequest, MetadataResponse } from '../../../protocol/messages/003-metadata.gen.js';
import { Cluster, parseHostPort } from '../../../src/client/cluster.js';
import { MetadataError } from '../../../src/client/errors.js';
import { FakeBroker, until } from './fake-broker.js';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const x of open.splice(0).reverse()) await x.close();
});

async function fake(): Promise<FakeBroker> {
  const b = await FakeBroker.start();
  open.push(b);
  return b;
}

function metadata(brokers: FakeBroker[], topics: MetadataResponse['topics'] = []): MetadataResponse {
  return MetadataApi.response.create({
    brokers: brokers.map((b, i) => ({ nodeId: i + 1, host: '127.0.0.1', port: b.port, rack: null })),
    clusterId: 'test-cluster',
    controllerId: 1,
    topics,
  });
}

function topic(name: string, leaders: number[], errorCode = 0): MetadataResponse['topics'][number] {
  return {
    errorCode,
    name,
    topicId: 'AAAAAAAAAAAAAAAAAAAAAQ',
    isInternal: false,
    topicAuthorizedOperations: 0,
    partitions: leaders.map((leaderId, i) => ({
      errorCode: leaderId < 0 ? ErrorCode.LEADER_NOT_AVAILABLE : 0,
      partitionIndex: i,
      leaderId,
      leaderEpoch: 0,
      replicaNodes: [Math.max(leaderId, 1)],
      isrNodes: [],
      offlineReplicas: [],
    })),
  };
}

describe('parseHostPort', () => {
  it('parses host:port and bracketed IPv6 and rejects the rest', () => {
    expect(parseHostPort('127.0.0.1:9092')).toEqual({ host: '127.0.0.1', port: 9092 });
    expect(parseHostPort('[::1]:19092')).toEqual({ host: '::1', port: 19092 });
    expect(() => parseHostPort('localhost')).toThrow(TypeError);
    expect(() => parseHostPort('h:0')).toThrow(/invalid port/);
  });
});

describe('Cluster', () => {
  it('bootstraps through the first reachable address and learns the brokers', async () => {
    const b = await fake();
    b.handlers[MetadataApi.apiKey] = () => metadata([b]);
    const dead = await FakeBroker.start();
    const deadPort = dead.port;
    await dead.close();
    const cluster = await Cluster.connect({ bootstrap: `127.0.0.1:${deadPort},${b.address}` });
    open.push(cluster);
    expect(cluster.clusterId).toBe('test-cluster');
    expect([...cluster.brokers.values()]).toEqual([{ nodeId: 1, host: '127.0.0.1', port: b.port, rack: null }]);
    // The first Metadata asks for brokers only.
    expect((b.requests(MetadataApi)[0]!.body as MetadataRequest).topics).toEqual([]);
  });

  it('reports every bootstrap failure when none is reachable', async () => {
    const dead = await FakeBroker.start();
    const port = dead.port;
    await dead.close();
    await expect(Cluster.connect({ bootstrap: [`127.0.0.1:${port}`] })).rejects.toMatchObject({
      code: 'LL_ERR_CLIENT_CONNECT',
      message: expect.stringContaining(`127.0.0.1:${port}`),
    });
  });

  it('finds partition leaders and explains partitions without one', async () => {
    const b1 = await fake();
    const b2 = await fake();
    for (const b of [b1, b2]) b.handlers[MetadataApi.apiKey] = () => metadata([b1, b2], [topic('t', [1, 2, -1])]);
    const cluster = await Cluster.connect({ bootstrap: b1.address });
    open.push(cluster);
    await cluster.refreshMetadata(['t']);
    expect(cluster.leaderFor('t', 0)).toBe(1);
    expect(cluster.leaderFor('t', 1)).toBe(2);
    const noLeader = (() => {
      try {
        cluster.leaderFor('t', 2);
      } catch (e) {
        return e;
      }
    })();
    expect(noLeader).toBeInstanceOf(MetadataError);
    expect(noLeader).toMatchObject({ code: 'LL_ERR_CLIENT_METADATA', errorCode: ErrorCode.LEADER_NOT_AVAILABLE });
    expect(() => cluster.leaderFor('t', 3)).toThrow(/has 3 partitions/);
    expect(() => cluster.leaderFor('other', 0)).toThrow(/unknown topic/);
    expect(cluster.topicNameById('AAAAAAAAAAAAAAAAAAAAAQ')).toBe('t');
    const c2 = await cluster.leaderConnection('t', 1);
    expect(c2.port).toBe(b2.port);
    expect(c2.nodeId).toBe(2);
  });

  it('drops a topic the broker reports as unknown', async () => {
    const b = await fake();
    let known = true;
    b.handlers[MetadataApi.apiKey] = () =>
      metadata([b], [known ? topic('t', [1]) : { ...topic('t', []), errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION }]);
    const cluster = await Cluster.connect({ bootstrap: b.address });
    open.push(cluster);
    await cluster.refreshMetadata(['t']);
    expect(cluster.topic('t')).toBeDefined();
    known = false;
    const answer = await cluster.refreshMetadata(['t']);
    expect(answer.topics[0]!.errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    expect(cluster.topic('t')).toBeUndefined();
  });

  it('keeps connectionsPerBroker connections and spreads lanes over them', async () => {
    const b = await fake();
    b.handlers[MetadataApi.apiKey] = () => metadata([b]);
    const cluster = await Cluster.connect({ bootstrap: b.address, connectionsPerBroker: 3 });
    open.push(cluster);
    const lanes = await Promise.all([0, 1, 2, 3, 4].map((lane) => cluster.connectionTo(1, lane)));
    expect(new Set(lanes).size).toBe(3);
    expect(lanes[3]).toBe(lanes[0]);
    expect(lanes[4]).toBe(lanes[1]);
    // Concurrent first uses of a lane share one connection attempt.
    const [x, y] = await Promise.all([cluster.connectionTo(1, 7), cluster.connectionTo(1, 7)]);
    expect(x).toBe(y);
  });

  it('reopens a pooled connection after it closed', async () => {
    const b = await fake();
    b.handlers[MetadataApi.apiKey] = () => metadata([b]);
    const cluster = await Cluster.connect({ bootstrap: b.address });
    open.push(cluster);
    const first = await cluster.connectionTo(1);
    const before = b.sockets.length;
    first.destroy();
    await until(() => !first.isOpen);
    const second = await cluster.connectionTo(1);
    expect(second).not.toBe(first);
    expect(second.isOpen).toBe(true);
    expect(b.sockets.length).toBe(before + 1);
  });

  it('refuses work after close', async () => {
    const b = await fake();
    b.handlers[MetadataApi.apiKey] = () => metadata([b]);
    const cluster = await Cluster.connect({ bootstrap: b.address });
    const conn = await cluster.connectionTo(1);
    await cluster.close();
    expect(conn.isOpen).toBe(false);
    await expect(cluster.connectionTo(1)).rejects.toMatchObject({ code: 'LL_ERR_CLIENT_CLOSED' });
  });
});
