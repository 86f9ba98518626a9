/**
 * Records written before the fuzz run, with known content, and the checks that they outlive it: the
 * stored bytes (as Fetch returns them from offset 0) must be identical after the run and after a restart,
 * and they must decode to exactly what was produced.
 */
import { CompressionType } from '../../../protocol/compression/index.js';
import { buildRecordBatch } from '../../../protocol/records/index.js';
import type { KafkaClient } from '../../../src/client/index.js';
import { decodeRecordSet } from '../records.js';
import { Prng } from './prng.js';
import { CODECS } from './records.js';

export interface SeedRecord {
  partition: number;
  key: string;
  value: Buffer;
  headers: Record<string, string>;
}

export interface SeedData {
  topic: string;
  partitions: number;
  records: SeedRecord[];
}

/** Produces one batch of every codec to every partition of `topic`, each with `perBatch` known records. */
export async function produceSeedData(client: KafkaClient, topic: string, partitions: number, seed: number, perBatch = 20): Promise<SeedData> {
  const rng = new Prng(seed, 0xfeed);
  const records: SeedRecord[] = [];
  for (let p = 0; p < partitions; p++) {
    for (const codec of CODECS) {
      const batch: SeedRecord[] = [];
      for (let i = 0; i < perBatch; i++) {
        batch.push({ partition: p, key: `seed-${p}-${codec}-${i}`, value: rng.bytes(rng.range(0, 300)), headers: { codec: String(codec), i: String(i) } });
      }
      const bytes = await buildRecordBatch(
        batch.map((r) => ({ key: r.key, value: r.value, headers: Object.entries(r.headers).map(([key, value]) => ({ key, value })) })),
        { compression: codec as (typeof CompressionType)[keyof typeof CompressionType] },
      );
      const [res] = await client.produce([{ topic, partition: p, records: bytes }]);
      if (res!.errorCode !== 0) throw new Error(`seed produce to ${topic}-${p} (codec ${codec}) failed with error ${res!.errorCode}`);
      records.push(...batch);
    }
  }
  return { topic, partitions, records };
}

/** The raw record set of every partition from offset 0 to its high watermark, as the broker returns it. */
export async function storedBytes(client: KafkaClient, data: SeedData): Promise<Buffer[]> {
  const out: Buffer[] = [];
  for (let p = 0; p < data.partitions; p++) {
    const [r] = await client.fetch([{ topic: data.topic, partition: p, offset: 0n, maxBytes: 8 * 1024 * 1024 }], { maxWaitMs: 0, minBytes: 0 });
    if (r!.errorCode !== 0) throw new Error(`fetch ${data.topic}-${p} failed with error ${r!.errorCode}`);
    out.push(Buffer.from(r!.records ?? Buffer.alloc(0)));
  }
  return out;
}

/** Differences between what was produced and what `stored` decodes to (empty when they agree). */
export async function seedDifferences(data: SeedData, stored: Buffer[]): Promise<string[]> {
  const problems: string[] = [];
  for (let p = 0; p < data.partitions; p++) {
    const want = data.records.filter((r) => r.partition === p);
    const { records } = await decodeRecordSet(stored[p] ?? null);
    if (records.length !== want.length) problems.push(`partition ${p}: ${records.length} records, expected ${want.length}`);
    for (let i = 0; i < Math.min(records.length, want.length); i++) {
      const got = records[i]!;
      const w = want[i]!;
      if (got.offset !== i || got.key !== w.key || !got.value?.equals(w.value) || JSON.stringify(got.headers) !== JSON.stringify(w.headers)) {
        problems.push(`partition ${p} offset ${i}: got key ${got.key} at offset ${got.offset}, expected ${w.key}`);
        break;
      }
    }
  }
  return problems;
}
