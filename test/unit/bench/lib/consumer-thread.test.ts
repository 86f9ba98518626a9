/**
 * The load generator's consumers in their own thread, against a fake broker in this one: what they count, the
 * totals they share while running, where they stop, and a thread that cannot connect.
 */
import { afterEach, describe, expect, it } from 'vitest';
import * as hdr from 'hdr-histogram-js';
import { MetadataApi } from '../../../../protocol/messages/003-metadata.gen.js';
import { FetchApi, createFetchResponsePartitionData } from '../../../../protocol/messages/001-fetch.gen.js';
import type { FetchRequest } from '../../../../protocol/messages/001-fetch.gen.js';
import { writeInt64 } from '../../../../protocol/records/index.js';
import { buildTemplate, copyTemplate, nowMs, stampBatch } from '../../../../bench/lib/batches.js';
import type { ConsumerLane } from '../../../../bench/lib/consume.js';
import { tpKey } from '../../../../bench/lib/consume.js';
import { ConsumerThread } from '../../../../bench/lib/consumer-thread.js';
import { parseWorkload } from '../../../../bench/lib/workload.js';
import { FakeBroker, oneNodeMetadata } from '../../client/fake-broker.js';

const TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAQ';
const workload = parseWorkload({ name: 'w', partitionsPerTopic: 2, producers: 1, consumers: 1, recordSize: 100, batchBytes: 800 });

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const x of open.splice(0).reverse()) await x.close();
});

/** A fake leader of `t`-0 and `t`-1 whose logs are what `append` put there; an empty fetch waits 20 ms. */
async function leader(): Promise<{ broker: FakeBroker; append(partition: number, sendTimeMs: number): void; end(partition: number): bigint }> {
  const template = await buildTemplate(workload);
  const logs: Buffer[][] = [[], []];
  const broker = await FakeBroker.start();
  open.push(broker);
  broker.handlers[MetadataApi.apiKey] = () => oneNodeMetadata(broker, 't', TOPIC_ID, 2);
  broker.handlers[FetchApi.apiKey] = async (req) => {
    const body = req.body as FetchRequest;
    const partitions = body.topics.flatMap((t) =>
      t.partitions.map((p) => {
        const from = Number(p.fetchOffset) / template.recordCount;
        const batches = logs[p.partition]!.slice(from);
        return createFetchResponsePartitionData({ partitionIndex: p.partition, highWatermark: BigInt(logs[p.partition]!.length * template.recordCount), records: Buffer.concat(batches) });
      }),
    );
    if (partitions.every((p) => (p.records as Buffer).length === 0)) await new Promise((r) => setTimeout(r, 20));
    return FetchApi.response.create({ responses: [{ topic: 't', topicId: TOPIC_ID, partitions }] });
  };
  return {
    broker,
    append(partition, sendTimeMs) {
      const batch = copyTemplate(template);
      stampBatch(batch, template, sendTimeMs);
      writeInt64(batch, 0, BigInt(logs[partition]!.length * template.recordCount)); // baseOffset
      logs[partition]!.push(batch);
    },
    end: (partition) => BigInt(logs[partition]!.length * template.recordCount),
  };
}

function lanes(from: bigint[], end?: bigint[]): ConsumerLane[] {
  const partitions = [0, 1].map((partition) => ({ topic: 't', partition }));
  return [
    {
      leader: 1,
      lane: 0,
      partitions,
      offsets: new Map(partitions.map((tp) => [tpKey(tp), from[tp.partition]!])),
      endOffsets: end ? new Map(partitions.map((tp) => [tpKey(tp), end[tp.partition]!])) : undefined,
    },
  ];
}

async function until(what: string, ok: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('the consumer thread', () => {
  it("counts the window's batches with their end-to-end latency, shares its totals while running, and stops when told", async () => {
    const { broker, append } = await leader();
    const recordsPerBatch = (await buildTemplate(workload)).recordCount;
    append(0, nowMs() - 60_000); // sent before the window: counted in the totals only
    const thread = await ConsumerThread.start({ client: { bootstrap: broker.address, clientId: 'unit' }, lanes: lanes([0n, 0n]), recordSize: 100, readCommitted: false, recordEndToEnd: true });
    thread.run();
    expect(thread.measuringFrom).toBeNull();
    await until('the batch before the window is consumed', () => thread.consumedTotal === recordsPerBatch);
    const windowStart = nowMs();
    thread.startMeasuring(windowStart);
    await until('the thread counts the window', () => thread.measuringFrom === windowStart);
    for (let i = 0; i < 5; i++) append(i % 2, nowMs());
    await until('every batch is consumed', () => thread.consumedTotal === 6 * recordsPerBatch);
    expect(thread.consumedBytesTotal).toBe(6 * recordsPerBatch * 100);
    const r = await thread.stop();
    expect(r.errors).toEqual({});
    expect(r.consumed).toMatchObject({ records: 5 * recordsPerBatch, bytes: 5 * recordsPerBatch * 100, batches: 5 });
    const e2e = hdr.decodeFromCompressedBase64(r.e2e, 32, false);
    expect(e2e.totalCount).toBe(5);
    // Latencies are the fake's: well under the deadline this test waits with.
    expect(e2e.maxValue).toBeLessThan(10_000_000);
    expect(r.offsets.get(tpKey({ topic: 't', partition: 0 }))).toBe(BigInt(4 * recordsPerBatch));
    expect(r.offsets.get(tpKey({ topic: 't', partition: 1 }))).toBe(BigInt(2 * recordsPerBatch));
    expect(thread.gcSeconds).toBeGreaterThanOrEqual(0);
    expect(thread.measuringFrom).toBe(windowStart);
  }, 30_000);

  it('reads a catch-up range to its end and stops by itself, counting every batch without a latency', async () => {
    const { broker, append, end } = await leader();
    const recordsPerBatch = (await buildTemplate(workload)).recordCount;
    for (let i = 0; i < 8; i++) append(i % 2, nowMs() - 60_000);
    const thread = await ConsumerThread.start({
      client: { bootstrap: broker.address, clientId: 'unit' },
      lanes: lanes([BigInt(recordsPerBatch), 0n], [end(0), end(1)]),
      recordSize: 100,
      readCommitted: false,
      recordEndToEnd: false,
      deadline: Date.now() + 20_000,
    });
    thread.run(0); // batches sent at any time are the window's
    const r = await thread.finished();
    expect(thread.measuringFrom).toBe(0);
    expect(r.consumed.records).toBe(7 * recordsPerBatch); // partition 0 from its second batch
    expect(hdr.decodeFromCompressedBase64(r.e2e, 32, false).totalCount).toBe(0);
    expect([...r.offsets.values()]).toEqual([end(0), end(1)]);
  }, 30_000);

  it('fails to start, saying why, when its client cannot connect', async () => {
    const broker = await FakeBroker.start();
    const address = broker.address;
    await broker.close();
    await expect(
      ConsumerThread.start({ client: { bootstrap: address, clientId: 'unit', requestTimeoutMs: 2_000 }, lanes: lanes([0n, 0n]), recordSize: 100, readCommitted: false, recordEndToEnd: true }),
    ).rejects.toThrow(/the consumer thread failed/);
  }, 30_000);
});
