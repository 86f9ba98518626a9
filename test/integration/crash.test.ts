/**
 * Durability under kill -9: producers keep several acks=all requests in flight on several partitions; the
 * broker is killed with SIGKILL at a random moment, restarted on the same data directory, and every
 * acknowledged record must be read back at the offset the broker acknowledged, with its bytes intact.
 * Records whose acknowledgement never arrived may or may not be there, but offsets stay dense and nothing
 * appears twice. Two rounds, so recovery of a log that was itself recovered is covered too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRecordBatch } from '../../protocol/records/index.js';
import { KafkaClient } from '../../src/client/index.js';
import { BrokerProcess } from '../support/broker-process.js';
import { readPartition } from '../support/records.js';

const PARTITIONS = 4;
const IN_FLIGHT_PER_PARTITION = 6;
const RECORDS_PER_BATCH = 8;

interface Acked {
  partition: number;
  baseOffset: bigint;
  values: string[];
}

describe.sequential('kill -9 during acks=all produce', () => {
  let broker: BrokerProcess;
  const acked: Acked[] = [];
  let sequence = 0;

  beforeAll(async () => {
    // Small ledgers so that the kills also land around rollovers.
    broker = await BrokerProcess.start({ configs: { 'log.segment.bytes': String(1024 * 1024) } });
    const admin = await KafkaClient.connect({ bootstrap: broker.bootstrap });
    const [r] = await admin.createTopics([{ name: 'durable', numPartitions: PARTITIONS }]);
    expect(r!.errorCode).toBe(0);
    await admin.close();
  });

  afterAll(async () => {
    await broker?.stop();
  });

  /** Produces until the connection dies; resolves with how many batches were acknowledged. */
  async function produceUntilKilled(killAfterMs: number): Promise<number> {
    const client = await KafkaClient.connect({ bootstrap: broker.bootstrap, clientId: 'crash-producer', requestTimeoutMs: 15_000 });
    let stop = false;
    let count = 0;
    const worker = async (partition: number): Promise<void> => {
      while (!stop) {
        const id = sequence++;
        const values = Array.from({ length: RECORDS_PER_BATCH }, (_, i) => `b${id}-r${i}-${'x'.repeat((id * 37 + i * 11) % 300)}`);
        const records = await buildRecordBatch(values.map((value) => ({ key: `p${partition}`, value })));
        try {
          const [r] = await client.produce([{ topic: 'durable', partition, records }], { acks: -1 });
          if (r!.errorCode !== 0) throw new Error(`produce failed with ${r!.errorCode}: ${r!.errorMessage}`);
          acked.push({ partition, baseOffset: r!.baseOffset, values });
          count++;
        } catch (e) {
          if (stop) return;
          throw e;
        }
      }
    };
    const workers: Promise<void>[] = [];
    for (let p = 0; p < PARTITIONS; p++) for (let i = 0; i < IN_FLIGHT_PER_PARTITION; i++) workers.push(worker(p));
    const settled = Promise.allSettled(workers);
    // Wait until the producers are well under way, then kill at the chosen moment.
    const started = Date.now();
    while (count < 20 && Date.now() - started < 20_000) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, killAfterMs));
    stop = true;
    await broker.kill('SIGKILL');
    const results = await settled;
    await client.close();
    for (const res of results) if (res.status === 'rejected') throw res.reason;
    return count;
  }

  async function verify(): Promise<void> {
    const client = await KafkaClient.connect({ bootstrap: broker.bootstrap, clientId: 'crash-verify' });
    try {
      for (let p = 0; p < PARTITIONS; p++) {
        const read = await readPartition(client, 'durable', p);
        // Offsets are dense from 0: no hole where a torn batch was dropped, no batch written twice.
        expect(read.map((r) => r.offset)).toEqual(read.map((_, i) => i));
        const byOffset = new Map(read.map((r) => [r.offset, r.value!.toString()]));
        const mine = acked.filter((a) => a.partition === p);
        expect(mine.length).toBeGreaterThan(0);
        for (const a of mine) {
          a.values.forEach((v, i) => {
            const at = Number(a.baseOffset) + i;
            if (byOffset.get(at) !== v) throw new Error(`partition ${p} offset ${at}: acknowledged ${v}, read ${byOffset.get(at)}`);
          });
        }
        const values = read.map((r) => r.value!.toString());
        expect(new Set(values).size).toBe(values.length);
      }
    } finally {
      await client.close();
    }
  }

  it('keeps every acknowledged record at its acknowledged offset across two SIGKILLs', async () => {
    for (let round = 0; round < 2; round++) {
      const killAfterMs = 100 + Math.floor(Math.random() * 900);
      const n = await produceUntilKilled(killAfterMs);
      expect(n).toBeGreaterThan(20);
      await broker.restart();
      await verify();
    }
    // The partitions take new appends right after the last recovered offset.
    const client = await KafkaClient.connect({ bootstrap: broker.bootstrap });
    try {
      const [end] = await client.listOffsets([{ topic: 'durable', partition: 0, timestamp: -1n }]);
      const [r] = await client.produce([{ topic: 'durable', partition: 0, records: await buildRecordBatch([{ value: 'after' }]) }]);
      expect(r).toMatchObject({ errorCode: 0, baseOffset: end!.offset });
    } finally {
      await client.close();
    }
  }, 90_000);
});
