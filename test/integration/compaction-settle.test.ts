/**
 * A compacted topic with 10 million updates over 10,000 keys settles below twice the size of its live
 * data, with Kafka's default min.cleanable.dirty.ratio (0.5): the log cleaner keeps up with a producer
 * writing 10 million records through a real broker, and once the producer stops (the open ledger rolls by
 * segment.ms when idle) the partition holds about one record per key. Live data is measured as the size
 * of one batch holding exactly the latest record of every key; the partition's size is the broker's
 * ledgerline_partition_size_bytes. The latest value of every key is then read back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRecordBatchSync } from '../../protocol/records/builder.js';
import { splitRecordBatches } from '../../protocol/records/split.js';
import { KafkaClient } from '../../src/client/index.js';
import { BrokerProcess } from '../support/broker-process.js';
import { waitFor } from '../support/raw-connection.js';

const UPDATES = 10_000_000;
const KEYS = 10_000;
const PER_BATCH = 10_000;
const TOPIC = 'settle';

/** The key of update i: pseudo-random (xorshift32, fixed seed), so the survivors lie spread over many batches. */
const KEY_OF = (() => {
  const keys = new Uint16Array(UPDATES);
  let x = 0x9e3779b9;
  for (let i = 0; i < UPDATES; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    keys[i] = (x >>> 0) % KEYS;
  }
  return keys;
})();
const keyOf = (i: number): string => `key-${String(KEY_OF[i]).padStart(5, '0')}`;
const valueOf = (i: number): string => `value-${String(i).padStart(9, '0')}`;

describe('compaction at volume', () => {
  let broker: BrokerProcess;
  let client: KafkaClient;
  let adminUrl: string;

  beforeAll(async () => {
    broker = await BrokerProcess.start({ configs: { 'log.cleaner.backoff.ms': '200', 'ledgerline.admin.listener': 'http://127.0.0.1:0' } });
    adminUrl = (JSON.parse(broker.logs.find((l) => l.includes('"admin HTTP endpoint listening"'))!) as { url: string }).url;
    client = await KafkaClient.connect({ bootstrap: broker.bootstrap });
  });

  afterAll(async () => {
    await client?.close();
    await broker?.stop();
  });

  async function sizeBytes(): Promise<number> {
    const text = await (await fetch(`${adminUrl}/metrics`)).text();
    const m = new RegExp(`^ledgerline_partition_size_bytes\\{topic="${TOPIC}",partition="0"\\} (\\d+)$`, 'm').exec(text);
    return m ? Number(m[1]) : Number.NaN;
  }

  it('settles 10 million updates over 10,000 keys below twice the size of the live data', { timeout: 600_000 }, async () => {
    const created = await client.createTopics([
      { name: TOPIC, numPartitions: 1, configs: { 'cleanup.policy': 'compact', 'segment.bytes': String(16 * 1024 * 1024), 'segment.ms': '3000' } },
    ]);
    expect(created[0]!.errorCode).toBe(0);
    const started = Date.now();
    let produced = 0;
    for (let base = 0; base < UPDATES; base += PER_BATCH) {
      const now = Date.now();
      const records = buildRecordBatchSync(
        Array.from({ length: PER_BATCH }, (_, j) => ({ key: keyOf(base + j), value: valueOf(base + j), timestamp: now })),
        { now },
      );
      produced += records.length;
      const [r] = await client.produce([{ topic: TOPIC, partition: 0, records }], { acks: -1 });
      expect(r!.errorCode).toBe(0);
    }
    const produceMs = Date.now() - started;
    // The live data: the latest record of every key, in one batch.
    const latest = new Map<string, number>();
    for (let i = UPDATES - 1; i >= 0 && latest.size < KEYS; i--) if (!latest.has(keyOf(i))) latest.set(keyOf(i), i);
    const live = buildRecordBatchSync([...latest].map(([key, i]) => ({ key, value: valueOf(i), timestamp: 0 })), { now: 0 }).length;
    const settled = await waitFor(
      'the partition to settle below twice its live data',
      async () => {
        const size = await sizeBytes();
        return size < 2 * live ? size : null;
      },
      300_000,
      1000,
    );
    const settleMs = Date.now() - started - produceMs;
    console.log(
      `compaction at volume: ${UPDATES} updates (${(produced / 2 ** 20).toFixed(0)} MiB) produced in ${(produceMs / 1000).toFixed(1)} s; ` +
        `settled at ${settled} bytes = ${(settled / live).toFixed(2)} x live (${live} bytes) ${(settleMs / 1000).toFixed(1)} s after the last produce`,
    );
    // Every key's latest value is there.
    const seen = new Map<string, string>();
    let offset = 0n;
    for (;;) {
      const [res] = await client.fetch([{ topic: TOPIC, partition: 0, offset, maxBytes: 8 * 1024 * 1024 }], { maxWaitMs: 0 });
      expect(res!.errorCode).toBe(0);
      if (!res!.records || res!.records.length === 0) break;
      let next = offset;
      for (const b of splitRecordBatches(res!.records)) {
        for (const r of b.records()) seen.set(r.key!.toString(), r.value!.toString());
        next = BigInt(b.lastOffsetNumber + 1);
      }
      if (next <= offset) break;
      offset = next;
    }
    expect(seen.size).toBe(KEYS);
    for (const [key, i] of latest) expect(seen.get(key)).toBe(valueOf(i));
  });
});
