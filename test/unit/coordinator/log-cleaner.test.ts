/**
 * The group coordinator's __consumer_offsets partition compacted by the log cleaner (src/log/compaction.ts),
 * as Kafka's LogCleaner compacts it: over a real partition log on the memory stores, with ledgers of four
 * batches, every commit in a ledger of its own share. After compaction passes and a restart, committed offsets,
 * classic and KIP-848 groups, and transactional offset commits (KIP-447) pending or completed load exactly as
 * before; the log keeps about one record per key; an open transaction holds the cleaner back from its batch on
 * (the last stable offset); tombstones go delete.retention.ms after the pass that kept them.
 */
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { createOffsetCommitRequest, createOffsetCommitRequestPartition, createOffsetCommitRequestTopic } from '../../../protocol/messages/008-offset-commit.gen.js';
import { createOffsetFetchRequestGroup, createOffsetFetchRequestTopics } from '../../../protocol/messages/009-offset-fetch.gen.js';
import { createOffsetDeleteRequestPartition, createOffsetDeleteRequestTopic } from '../../../protocol/messages/047-offset-delete.gen.js';
import { createTxnOffsetCommitRequest, createTxnOffsetCommitRequestPartition, createTxnOffsetCommitRequestTopic } from '../../../protocol/messages/028-txn-offset-commit.gen.js';
import { RecordBatch } from '../../../protocol/records/batch.js';
import { groupCoordinatorConfig, type GroupCoordinatorConfig } from '../../../src/coordinator/config.js';
import { GroupCoordinator } from '../../../src/coordinator/coordinator.js';
import { decodeRecord } from '../../../src/coordinator/records.js';
import { KeyOffsetMap } from '../../../src/log/offset-map.js';
import { PartitionLog } from '../../../src/log/partition-log.js';
import { ManualClock } from '../../../src/metadata/clock.js';
import { MemoryStores, type Stores } from '../log/support.js';
import { FakeTopics, consumerGroupHeartbeat, settle, startJoin, sync, type Harness } from './harness.js';

const T0 = 1_700_000_000_000;
const DELETE_RETENTION_MS = 60_000;
/** What the cleaner needs to run on a small log at once: ledgers of 4 batches, any dirty share due. */
const LOG_CONFIG = { cleanupPolicy: ['compact'] as const, segmentEntries: 4, minCleanableDirtyRatio: 0, deleteRetentionMs: DELETE_RETENTION_MS };

let memory: MemoryStores;
let stores: Stores;
let clock: ManualClock;
let topics: FakeTopics;
let log: PartitionLog;
let c: GroupCoordinator;
const G = 'txn-group';

async function start(overrides: Partial<GroupCoordinatorConfig> = {}): Promise<void> {
  log = await PartitionLog.open({
    topic: '__consumer_offsets',
    partition: 0,
    ledgers: stores.ledgers,
    metadata: stores.metadata,
    retentionCheckIntervalMs: 0,
    clock,
    config: LOG_CONFIG,
  });
  c = new GroupCoordinator({
    config: groupCoordinatorConfig(new Map([['offsets.topic.num.partitions', '1']]), overrides),
    topics,
    clock,
    openLog: async () => log,
  });
  await c.start();
  await c.loadOwned();
}

/** A broker restart: the coordinator and its log close, and both open again on the same stores. */
async function restart(overrides: Partial<GroupCoordinatorConfig> = {}): Promise<void> {
  await c.stop();
  await log.close();
  await start(overrides);
}

beforeEach(async () => {
  memory = new MemoryStores();
  stores = await memory.open();
  clock = new ManualClock(T0);
  topics = new FakeTopics();
  topics.add('t', 4);
});

afterEach(async () => {
  await c?.stop().catch(() => undefined);
  await log?.close().catch(() => undefined);
  await stores.close();
});

/** Compaction passes, as the broker's cleaner runs them, until none is due (or `force` one more). */
async function clean(force = false): Promise<number> {
  let passes = 0;
  for (let i = 0; i < 10; i++) {
    const r = await log.compact({ now: clock.now(), map: new KeyOffsetMap(1 << 20), force: force && i === 0 });
    if (r === null) break;
    passes++;
  }
  return passes;
}

interface Stored {
  readonly offset: number;
  readonly type: string;
  readonly key: unknown;
  readonly tombstone: boolean;
  readonly producerId: bigint;
  readonly control: boolean;
}

/** Every batch's records as the coordinator reads them back, from the log start to the high watermark. */
async function stored(): Promise<Stored[]> {
  const out: Stored[] = [];
  let offset = log.logStartOffset;
  while (offset < log.highWatermark) {
    const res = await log.read(offset, { maxBytes: 1 << 20 });
    if (res.records.length === 0) break;
    for (const buf of res.records) {
      const b = RecordBatch.wrap(buf);
      const producerId = b.isTransactional ? b.producerId : -1n;
      for (const r of b.records()) {
        if (b.isControl) {
          out.push({ offset: r.offset, type: 'marker', key: null, tombstone: false, producerId, control: true });
          continue;
        }
        const rec = decodeRecord(r.key!, r.value);
        out.push({ offset: r.offset, type: rec.type, key: 'key' in rec ? rec.key : rec.keyBytes, tombstone: r.value === null, producerId, control: false });
      }
    }
    offset = res.nextOffset;
  }
  return out;
}

function commit(groupId: string, partition: number, offset: bigint, memberId = '', generationIdOrMemberEpoch = -1, apiVersion = 8) {
  return c.commitOffsets(
    createOffsetCommitRequest({
      groupId,
      memberId,
      generationIdOrMemberEpoch,
      topics: [createOffsetCommitRequestTopic({ name: 't', partitions: [createOffsetCommitRequestPartition({ partitionIndex: partition, committedOffset: offset })] })],
    }),
    apiVersion,
  );
}

function txnCommit(groupId: string, partition: number, offset: bigint, producerId = 9n) {
  return c.txnOffsetCommit(
    createTxnOffsetCommitRequest({
      transactionalId: `tx-${producerId}`,
      groupId,
      producerId,
      producerEpoch: 0,
      topics: [createTxnOffsetCommitRequestTopic({ name: 't', partitions: [createTxnOffsetCommitRequestPartition({ partitionIndex: partition, committedOffset: offset })] })],
    }),
    3,
  );
}

/** The committed offset and error of each partition of t, as OffsetFetch (require_stable) answers them. */
async function fetched(groupId: string, partitions = [0, 1, 2, 3]): Promise<Array<[bigint, number]>> {
  const f = await c.fetchOffsets(createOffsetFetchRequestGroup({ groupId, topics: [createOffsetFetchRequestTopics({ name: 't', partitionIndexes: partitions })] }), true);
  return f.topics[0]!.partitions.map((p) => [p.committedOffset, p.errorCode]);
}

describe('__consumer_offsets compacted by the log cleaner', () => {
  it("is created with Kafka's configs: cleanup.policy=compact, compression.type=producer, segment.bytes=offsets.topic.segment.bytes", async () => {
    const created: Array<{ name: string; configs: Record<string, string | null> }> = [];
    const capture = Object.assign(Object.create(topics) as FakeTopics, {
      create: async (name: string, opts: { partitions: number; configs: Record<string, string | null> }) => {
        created.push({ name, configs: opts.configs });
        return topics.add(name, opts.partitions, true);
      },
    });
    const g = new GroupCoordinator({ config: groupCoordinatorConfig(new Map([['offsets.topic.segment.bytes', '4096']])), topics: capture, clock, openLog: async () => log });
    await g.start();
    await g.stop();
    expect(created).toEqual([{ name: '__consumer_offsets', configs: { 'cleanup.policy': 'compact', 'compression.type': 'producer', 'segment.bytes': '4096' } }]);
  });

  it('loads every committed offset after compaction and a restart, from a log that keeps about one record per key', async () => {
    await start();
    const expected = new Map<string, bigint>();
    for (let i = 0; i < 300; i++) {
      const g = `g${i % 3}`;
      const p = (i >> 2) % 4;
      await commit(g, p, BigInt(i));
      expected.set(`${g}/${p}`, BigInt(i));
    }
    expect(log.highWatermark).toBe(300);
    expect(await clean()).toBeGreaterThan(0);
    const left = await stored();
    // 12 keys, each latest record kept at its offset; the open ledger (at most 4 batches) is not cleaned.
    expect(left.length).toBeLessThanOrEqual(12 + 4);
    for (let i = 1; i < left.length; i++) expect(left[i]!.offset).toBeGreaterThan(left[i - 1]!.offset);
    await restart();
    for (const g of ['g0', 'g1', 'g2']) {
      expect(await fetched(g)).toEqual([0, 1, 2, 3].map((p) => [expected.get(`${g}/${p}`) ?? -1n, ErrorCode.NONE]));
    }
    expect(c.shard(0).lastLoad!.records).toBe(left.length);
  });

  it('loads classic and KIP-848 groups as they were before compaction and a restart', async () => {
    await start();
    const h = { coordinator: c } as Harness;
    // A classic group with two members, stable.
    const j1 = await startJoin(h, 'classic');
    const j2 = await startJoin(h, 'classic');
    // The first generation waits group.initial.rebalance.delay.ms, extended once by the second member.
    clock.advance(6000);
    await settle();
    const [r1, r2] = await Promise.all([j1.result, j2.result]);
    const leader = r1!.leader === r1!.memberId ? r1! : r2!;
    const assignments = { [r1!.memberId]: Buffer.from('a1'), [r2!.memberId]: Buffer.from('a2') };
    await Promise.all([(await sync(h, 'classic', leader, assignments)).result, (await sync(h, 'classic', leader === r1 ? r2! : r1!)).result]);
    // A KIP-848 group: a member, its epoch bumped by a second member and a leave.
    const m1 = await consumerGroupHeartbeat(h, 'modern', { subscribedTopicNames: ['t'], rebalanceTimeoutMs: 30_000, topicPartitions: [] });
    expect(m1.errorCode).toBe(ErrorCode.NONE);
    const m2 = await consumerGroupHeartbeat(h, 'modern', { subscribedTopicNames: ['t'], rebalanceTimeoutMs: 30_000, topicPartitions: [] });
    await consumerGroupHeartbeat(h, 'modern', { memberId: m2.memberId!, memberEpoch: -1 });
    const m1b = await consumerGroupHeartbeat(h, 'modern', { memberId: m1.memberId!, memberEpoch: m1.memberEpoch, topicPartitions: [] });
    expect(m1b.errorCode).toBe(ErrorCode.NONE);
    // Offsets committed by the members, with their generation or member epoch (OffsetCommit v9+ for a KIP-848 member).
    for (let i = 0; i < 60; i++) {
      const r = await (i % 2 ? commit('classic', i % 4, BigInt(i), r1!.memberId, r1!.generationId) : commit('modern', i % 4, BigInt(i), m1.memberId!, m1b.memberEpoch, 9));
      expect(r.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NONE);
    }
    const describe = async () => ({
      classic: await c.describeGroups(['classic'], 5),
      modern: await c.consumerGroupDescribe(['modern']),
      listed: (await c.listGroups([], [])).groups.sort((a, b) => (a.groupId < b.groupId ? -1 : 1)),
      offsets: [await fetched('classic'), await fetched('modern')],
    });
    const before = await describe();
    expect(before.classic[0]!.members.length).toBe(2);
    expect(before.modern[0]!.members.length).toBe(1);
    expect(await clean()).toBeGreaterThan(0);
    expect((await stored()).length).toBeLessThan(log.highWatermark / 2);
    await restart();
    expect(await describe()).toEqual(before);
  });

  it('leaves a pending transactional offset commit and all after it to the cleaner until its marker, and loads it committed after', async () => {
    await start();
    await commit(G, 0, 5n);
    for (let i = 0; i < 3; i++) await commit(G, 2, BigInt(i));
    expect((await txnCommit(G, 0, 10n)).topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NONE);
    const pendingAt = log.highWatermark - 1;
    for (let i = 0; i < 30; i++) await commit(G, 1, BigInt(i));
    // The open transaction holds the last stable offset at its batch: the cleaner stops before the ledger holding it.
    expect(log.lastStableOffset).toBe(pendingAt);
    await clean(true);
    const held = await stored();
    expect(held.filter((r) => r.offset >= pendingAt - (pendingAt % 4)).length).toBe(log.highWatermark - (pendingAt - (pendingAt % 4)));
    expect(held.some((r) => r.producerId === 9n)).toBe(true);
    await restart();
    expect(await fetched(G, [0, 1, 2])).toEqual([
      [-1n, ErrorCode.UNSTABLE_OFFSET_COMMIT],
      [29n, ErrorCode.NONE],
      [2n, ErrorCode.NONE],
    ]);
    // The pending record is newer than the plain commit of t-0 (offset 0): it wins at commit, and still after compaction.
    expect(await c.completeTransaction(0, 9n, 0, 1, true)).toBe(ErrorCode.NONE);
    for (let i = 0; i < 8; i++) await commit(G, 3, BigInt(i));
    expect(log.lastStableOffset).toBe(log.highWatermark);
    expect(await clean()).toBeGreaterThan(0);
    const left = await stored();
    // t-0's plain commit is superseded by the committed transactional record, which keeps its marker.
    expect(left.filter((r) => r.type === 'OffsetCommit' && (r.key as { partition: number }).partition === 0).map((r) => r.producerId)).toEqual([9n]);
    expect(left.filter((r) => r.control).length).toBe(1);
    await restart();
    expect(await fetched(G)).toEqual([
      [10n, ErrorCode.NONE],
      [29n, ErrorCode.NONE],
      [2n, ErrorCode.NONE],
      [7n, ErrorCode.NONE],
    ]);
  });

  it('keeps a later plain commit over a transactional one committed after it, before and after compaction', async () => {
    await start();
    await txnCommit(G, 0, 10n);
    await commit(G, 0, 20n);
    expect(await c.completeTransaction(0, 9n, 0, 1, true)).toBe(ErrorCode.NONE);
    expect(await fetched(G, [0])).toEqual([[20n, ErrorCode.NONE]]);
    for (let i = 0; i < 8; i++) await commit(G, 1, BigInt(i));
    await clean();
    // The transactional record is superseded and goes. Its batch stays, empty, as the producer's last (its
    // sequence state), and with it the COMMIT marker, as Kafka's cleaner keeps a marker while a batch of its
    // transaction is left, past delete.retention.ms too: a marker with no pending offsets left to complete.
    clock.advance(DELETE_RETENTION_MS + 1);
    for (let i = 0; i < 8; i++) await commit(G, 1, BigInt(100 + i));
    await clean(true);
    const left = await stored();
    expect(left.some((r) => r.producerId === 9n && !r.control)).toBe(false);
    expect(left.filter((r) => r.control).length).toBe(1);
    await restart();
    expect(await fetched(G, [0, 1])).toEqual([
      [20n, ErrorCode.NONE],
      [107n, ErrorCode.NONE],
    ]);
  });

  it('drops the data of an aborted transactional offset commit, and loads without it', async () => {
    await start();
    await commit(G, 0, 5n);
    await txnCommit(G, 0, 10n);
    await txnCommit(G, 1, 11n, 10n);
    expect(await c.completeTransaction(0, 9n, 0, 1, false)).toBe(ErrorCode.NONE);
    expect(await c.completeTransaction(0, 10n, 0, 1, true)).toBe(ErrorCode.NONE);
    for (let i = 0; i < 8; i++) await commit(G, 3, BigInt(i));
    await clean();
    const left = await stored();
    expect(left.some((r) => r.producerId === 9n && !r.control)).toBe(false);
    expect(left.some((r) => r.producerId === 10n && !r.control)).toBe(true);
    await restart();
    expect(await fetched(G)).toEqual([
      [5n, ErrorCode.NONE],
      [11n, ErrorCode.NONE],
      [-1n, ErrorCode.NONE],
      [7n, ErrorCode.NONE],
    ]);
  });

  it('keeps the tombstones of a deleted group and of expired offsets for delete.retention.ms after the pass that kept them, then drops them', async () => {
    const retention = { offsetsRetentionMs: 10 * 60_000, offsetsRetentionCheckIntervalMs: 60_000 };
    await start(retention);
    for (let i = 0; i < 12; i++) await commit('doomed', i % 4, BigInt(i));
    await commit('expiring', 0, 1n);
    expect((await c.deleteGroups(['doomed']))[0]!.errorCode).toBe(ErrorCode.NONE);
    // The simple group's offset expires offsets.retention.minutes after its commit (Kafka's OffsetExpirationCondition).
    clock.advance(retention.offsetsRetentionMs + retention.offsetsRetentionCheckIntervalMs);
    await c.loaded();
    for (let i = 0; i < 30 && !(await stored()).some((r) => r.tombstone && (r.key as { group?: string }).group === 'expiring'); i++) {
      await new Promise((r) => setImmediate(r));
    }
    for (let i = 0; i < 8; i++) await commit('alive', i % 4, BigInt(i));
    await clean();
    const ofGroup = (rs: Stored[], g: string) => rs.filter((r) => JSON.stringify(r.key).includes(`"${g}"`));
    let left = await stored();
    expect(ofGroup(left, 'doomed').length).toBeGreaterThan(0);
    expect(ofGroup(left, 'doomed').every((r) => r.tombstone)).toBe(true);
    // The offset's tombstone, and the simple group's (GroupMetadata) once it holds no offset.
    expect(ofGroup(left, 'expiring').map((r) => [r.type, r.tombstone])).toEqual([
      ['OffsetCommit', true],
      ['GroupMetadata', true],
    ]);
    await restart(retention);
    expect((await c.listGroups([], [])).groups.map((g) => g.groupId)).toEqual(['alive']);
    // Past delete.retention.ms since the pass that first kept them: the next pass drops them.
    clock.advance(DELETE_RETENTION_MS + 1);
    expect(await clean(true)).toBeGreaterThan(0);
    left = await stored();
    expect(ofGroup(left, 'doomed')).toEqual([]);
    expect(ofGroup(left, 'expiring')).toEqual([]);
    await restart(retention);
    expect((await c.listGroups([], [])).groups.map((g) => g.groupId)).toEqual(['alive']);
    expect(await fetched('alive')).toEqual([0, 1, 2, 3].map((p) => [BigInt(p + 4), ErrorCode.NONE]));
  });

  it('loads the state it had before, whatever mix of commits, transactions, deletions and passes came first (a model check)', { timeout: 60_000 }, async () => {
    type Op =
      | { kind: 'commit'; group: number; partition: number }
      | { kind: 'txn'; group: number; partition: number; producer: number }
      | { kind: 'end'; producer: number; commit: boolean }
      | { kind: 'deleteOffset'; group: number; partition: number }
      | { kind: 'deleteGroup'; group: number }
      | { kind: 'clean' }
      | { kind: 'advance'; ms: number }
      | { kind: 'restart' };
    const group = fc.integer({ min: 0, max: 2 });
    const partition = fc.integer({ min: 0, max: 3 });
    const producer = fc.integer({ min: 0, max: 1 });
    const op: fc.Arbitrary<Op> = fc.oneof(
      { weight: 10, arbitrary: fc.record({ kind: fc.constant('commit' as const), group, partition }) },
      { weight: 4, arbitrary: fc.record({ kind: fc.constant('txn' as const), group, partition, producer }) },
      { weight: 3, arbitrary: fc.record({ kind: fc.constant('end' as const), producer, commit: fc.boolean() }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('deleteOffset' as const), group, partition }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('deleteGroup' as const), group }) },
      { weight: 3, arbitrary: fc.constant({ kind: 'clean' as const }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 2 * DELETE_RETENTION_MS }) }) },
      { weight: 2, arbitrary: fc.constant({ kind: 'restart' as const }) },
    );
    /** What OffsetFetch answers for every group and partition (require_stable and not), and the groups listed. */
    // An empty group holding no offset, committed or pending, is left out: its records may all be gone (the data
    // of an aborted transaction, offsets and their tombstones past delete.retention.ms), so a load may not
    // create it again, as Kafka's does not; its next offsets retention check removes it either way (Kafka's
    // cleanupGroupMetadata, offset-manager.ts expire).
    const snapshot = async () => {
      const groups: unknown[] = [];
      const out: unknown[] = [groups];
      for (let g = 0; g < 3; g++) {
        const f = await c.fetchOffsets(createOffsetFetchRequestGroup({ groupId: `m${g}`, topics: [createOffsetFetchRequestTopics({ name: 't', partitionIndexes: [0, 1, 2, 3] })] }), false);
        const stable = await fetched(`m${g}`);
        out.push(f.topics[0]!.partitions.map((p) => p.committedOffset), stable);
        const listed = (await c.listGroups([], [])).groups.find((l) => l.groupId === `m${g}`);
        const holdsNothing = stable.every(([o, e]) => o === -1n && e === ErrorCode.NONE);
        if (listed && !(listed.groupState === 'Empty' && holdsNothing)) groups.push([listed.groupId, listed.groupState, listed.protocolType]);
      }
      return out;
    };
    await stores.close();
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 10, maxLength: 60 }), async (ops) => {
        stores = await new MemoryStores().open();
        clock = new ManualClock(T0);
        await start();
        const open = new Set<number>();
        let n = 0;
        try {
          for (const o of ops) {
            switch (o.kind) {
              case 'commit':
                await commit(`m${o.group}`, o.partition, BigInt(++n));
                break;
              case 'txn':
                if ((await txnCommit(`m${o.group}`, o.partition, BigInt(++n), BigInt(20 + o.producer))).topics[0]!.partitions[0]!.errorCode === ErrorCode.NONE) open.add(o.producer);
                break;
              case 'end':
                // A marker only ends a transaction that wrote here, as the transaction coordinator sends them.
                if (open.delete(o.producer)) expect(await c.completeTransaction(0, BigInt(20 + o.producer), 0, 1, o.commit)).toBe(ErrorCode.NONE);
                break;
              case 'deleteOffset':
                await c.deleteOffsets(`m${o.group}`, [createOffsetDeleteRequestTopic({ name: 't', partitions: [createOffsetDeleteRequestPartition({ partitionIndex: o.partition })] })]);
                break;
              case 'deleteGroup':
                await c.deleteGroups([`m${o.group}`]);
                break;
              case 'clean':
                await clean(true);
                break;
              case 'advance':
                clock.advance(o.ms);
                break;
              case 'restart': {
                const before = await snapshot();
                await restart();
                expect(await snapshot()).toEqual(before);
                break;
              }
            }
          }
          await clean(true);
          const before = await snapshot();
          await restart();
          expect(await snapshot()).toEqual(before);
        } finally {
          await c.stop();
          await log.close();
          await stores.close();
        }
      }),
      { numRuns: 25, ...(process.env.LEDGERLINE_FUZZ_SEED ? { seed: Number(process.env.LEDGERLINE_FUZZ_SEED) } : {}) },
    );
    stores = await new MemoryStores().open();
  });
});
