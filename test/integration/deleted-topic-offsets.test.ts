/**
 * A deleted topic's committed offsets, over the wire against a real broker: after a restart the group's
 * __consumer_offsets partition is not loaded (partitions load on first use); the topic is deleted and created
 * again under the same name; OffsetFetch then answers no offset (-1) for it, as Kafka does, whose
 * onPartitionsDeleted tombstones every group's offsets of a deleted topic.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../protocol/error-codes.js';
import { CreateTopicsApi, createCreateTopicsRequest, createCreateTopicsRequestCreatableTopic } from '../../protocol/messages/019-create-topics.gen.js';
import { DeleteTopicsApi, createDeleteTopicsRequest } from '../../protocol/messages/020-delete-topics.gen.js';
import { OffsetCommitApi, createOffsetCommitRequest, createOffsetCommitRequestPartition, createOffsetCommitRequestTopic } from '../../protocol/messages/008-offset-commit.gen.js';
import { OffsetFetchApi, createOffsetFetchRequest, createOffsetFetchRequestGroup, createOffsetFetchRequestTopics } from '../../protocol/messages/009-offset-fetch.gen.js';
import { BrokerProcess } from '../support/broker-process.js';
import { RawConnection, waitFor } from '../support/raw-connection.js';

const GROUP = 'offsets-of-a-deleted-topic';

async function createTopic(conn: RawConnection, name: string): Promise<number> {
  const res = await conn.request(
    CreateTopicsApi,
    7,
    createCreateTopicsRequest({ topics: [createCreateTopicsRequestCreatableTopic({ name, numPartitions: 1, replicationFactor: 1 })], timeoutMs: 30_000 }),
  );
  return res.topics[0]!.errorCode;
}

async function commit(conn: RawConnection, topic: string, offset: bigint): Promise<number> {
  const res = await conn.request(
    OffsetCommitApi,
    8,
    createOffsetCommitRequest({
      groupId: GROUP,
      generationIdOrMemberEpoch: -1,
      topics: [createOffsetCommitRequestTopic({ name: topic, partitions: [createOffsetCommitRequestPartition({ partitionIndex: 0, committedOffset: offset })] })],
    }),
  );
  return res.topics[0]!.partitions[0]!.errorCode;
}

async function committed(conn: RawConnection, topic: string): Promise<{ errorCode: number; offset: bigint }> {
  const res = await conn.request(
    OffsetFetchApi,
    8,
    createOffsetFetchRequest({ groups: [createOffsetFetchRequestGroup({ groupId: GROUP, topics: [createOffsetFetchRequestTopics({ name: topic, partitionIndexes: [0] })] })] }),
  );
  const g = res.groups[0]!;
  const p = g.topics[0]!.partitions[0]!;
  return { errorCode: g.errorCode || p.errorCode, offset: p.committedOffset };
}

describe('committed offsets of a deleted topic', () => {
  let broker: BrokerProcess | undefined;
  let conn: RawConnection | undefined;
  afterAll(async () => {
    conn?.destroy();
    await broker?.stop();
  });

  // Each takes ~15 s alone (two broker restarts); under the whole suite's load on two cores, more than 30.
  it('are gone for a topic re-created under the same name while the group\'s partition was not loaded, after a restart too', { timeout: 90_000 }, async () => {
    broker = await BrokerProcess.start();
    conn = await RawConnection.connect(broker.port);
    expect(await createTopic(conn, 'recreated')).toBe(ErrorCode.NONE);
    expect(await createTopic(conn, 'kept')).toBe(ErrorCode.NONE);
    expect(await commit(conn, 'recreated', 42n)).toBe(ErrorCode.NONE);
    expect(await commit(conn, 'kept', 7n)).toBe(ErrorCode.NONE);
    conn.destroy();

    // The restarted broker has loaded no __consumer_offsets partition.
    await broker.restart();
    conn = await RawConnection.connect(broker.port);
    const deleted = await conn.request(DeleteTopicsApi, 4, createDeleteTopicsRequest({ topicNames: ['recreated'], timeoutMs: 30_000 }));
    expect(deleted.responses[0]!.errorCode).toBe(ErrorCode.NONE);
    const c = conn;
    await waitFor('the topic created again', async () => (await createTopic(c, 'recreated')) === ErrorCode.NONE);

    expect(await committed(conn, 'recreated')).toEqual({ errorCode: ErrorCode.NONE, offset: -1n });
    expect(await committed(conn, 'kept')).toEqual({ errorCode: ErrorCode.NONE, offset: 7n });
    conn.destroy();

    // The tombstones are durable: the next broker does not find the old offset either.
    await broker.restart();
    conn = await RawConnection.connect(broker.port);
    expect(await committed(conn, 'recreated')).toEqual({ errorCode: ErrorCode.NONE, offset: -1n });
    expect(await committed(conn, 'kept')).toEqual({ errorCode: ErrorCode.NONE, offset: 7n });
  });

  it('are gone when the broker restarted between the deletion and the partition\'s load: the offset carries its topic id', { timeout: 90_000 }, async () => {
    conn?.destroy();
    await broker?.stop();
    broker = await BrokerProcess.start();
    conn = await RawConnection.connect(broker.port);
    expect(await createTopic(conn, 'reborn')).toBe(ErrorCode.NONE);
    expect(await createTopic(conn, 'kept')).toBe(ErrorCode.NONE);
    expect(await commit(conn, 'reborn', 42n)).toBe(ErrorCode.NONE);
    expect(await commit(conn, 'kept', 7n)).toBe(ErrorCode.NONE);
    conn.destroy();
    await broker.restart();
    conn = await RawConnection.connect(broker.port);
    const deleted = await conn.request(DeleteTopicsApi, 4, createDeleteTopicsRequest({ topicNames: ['reborn'], timeoutMs: 30_000 }));
    expect(deleted.responses[0]!.errorCode).toBe(ErrorCode.NONE);
    const c = conn;
    await waitFor('the topic created again', async () => (await createTopic(c, 'reborn')) === ErrorCode.NONE);
    conn.destroy();
    // The deletion the unloaded partition had still to apply is forgotten with the process.
    await broker.restart();
    conn = await RawConnection.connect(broker.port);
    expect(await committed(conn, 'reborn')).toEqual({ errorCode: ErrorCode.NONE, offset: -1n });
    expect(await committed(conn, 'kept')).toEqual({ errorCode: ErrorCode.NONE, offset: 7n });
    // An offset committed for the new topic is its own.
    expect(await commit(conn, 'reborn', 3n)).toBe(ErrorCode.NONE);
    conn.destroy();
    await broker.restart();
    conn = await RawConnection.connect(broker.port);
    expect(await committed(conn, 'reborn')).toEqual({ errorCode: ErrorCode.NONE, offset: 3n });
  });
});
