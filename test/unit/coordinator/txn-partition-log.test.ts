/**
 * Transactional offsets over a real partition log (src/log): the transactional batch and the marker the
 * coordinator appends are stored and read back, and a reopened log replays them (log-cleaner.test.ts: the same
 * over a log the cleaner compacted).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { createOffsetFetchRequestGroup, createOffsetFetchRequestTopics } from '../../../protocol/messages/009-offset-fetch.gen.js';
import { createTxnOffsetCommitRequest, createTxnOffsetCommitRequestPartition, createTxnOffsetCommitRequestTopic } from '../../../protocol/messages/028-txn-offset-commit.gen.js';
import { groupCoordinatorConfig } from '../../../src/coordinator/config.js';
import { GroupCoordinator } from '../../../src/coordinator/coordinator.js';
import { PartitionLog } from '../../../src/log/partition-log.js';
import { ManualClock } from '../../../src/metadata/clock.js';
import { MemoryStores, type Stores } from '../log/support.js';
import { FakeTopics } from './harness.js';

const G = 'txn-on-log';
let stores: Stores | null = null;
const opened: Array<PartitionLog | GroupCoordinator> = [];

afterEach(async () => {
  for (const x of opened.splice(0).reverse()) await (x instanceof GroupCoordinator ? x.stop() : x.close()).catch(() => undefined);
  await stores?.close();
  stores = null;
});

async function node(memory: MemoryStores, topics: FakeTopics): Promise<{ c: GroupCoordinator; log: PartitionLog }> {
  stores ??= await memory.open();
  const log = await PartitionLog.open({ topic: '__consumer_offsets', partition: 0, ledgers: stores.ledgers, metadata: stores.metadata, retentionCheckIntervalMs: 0 });
  opened.push(log);
  const c = new GroupCoordinator({
    config: groupCoordinatorConfig(new Map([['offsets.topic.num.partitions', '1']])),
    topics,
    clock: new ManualClock(),
    openLog: async () => log,
  });
  opened.push(c);
  await c.start();
  return { c, log };
}

async function restart(memory: MemoryStores, topics: FakeTopics) {
  for (const x of opened.splice(0).reverse()) await (x instanceof GroupCoordinator ? x.stop() : x.close());
  return node(memory, topics);
}

function txn(c: GroupCoordinator, partition: number, offset: bigint, producerId = 9n) {
  return c.txnOffsetCommit(
    createTxnOffsetCommitRequest({
      transactionalId: 'tx',
      groupId: G,
      producerId,
      producerEpoch: 0,
      topics: [createTxnOffsetCommitRequestTopic({ name: 't', partitions: [createTxnOffsetCommitRequestPartition({ partitionIndex: partition, committedOffset: offset })] })],
    }),
    3,
  );
}

async function fetched(c: GroupCoordinator, partitions: number[]): Promise<Array<[bigint, number]>> {
  const f = await c.fetchOffsets(createOffsetFetchRequestGroup({ groupId: G, topics: [createOffsetFetchRequestTopics({ name: 't', partitionIndexes: partitions })] }), true);
  return f.topics[0]!.partitions.map((p) => [p.committedOffset, p.errorCode]);
}

describe('transactional offsets on a partition log', () => {
  it('appends the transactional batch and the marker, and a reopened log replays both', async () => {
    const memory = new MemoryStores();
    const topics = new FakeTopics();
    topics.add('t', 3);
    let { c, log } = await node(memory, topics);
    expect((await txn(c, 0, 10n)).topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NONE);
    expect((await txn(c, 1, 11n, 10n)).topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NONE);
    expect(await c.completeTransaction(0, 9n, 0, 1, true)).toBe(ErrorCode.NONE);
    expect(log.highWatermark).toBe(3);
    ({ c, log } = await restart(memory, topics));
    expect(await fetched(c, [0, 1])).toEqual([
      [10n, ErrorCode.NONE],
      [-1n, ErrorCode.UNSTABLE_OFFSET_COMMIT],
    ]);
    expect(await c.completeTransaction(0, 10n, 0, 1, false)).toBe(ErrorCode.NONE);
    ({ c, log } = await restart(memory, topics));
    expect(await fetched(c, [0, 1])).toEqual([
      [10n, ErrorCode.NONE],
      [-1n, ErrorCode.NONE],
    ]);
  });
});
