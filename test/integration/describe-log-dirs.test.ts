/**
 * DescribeLogDirs lists every partition the broker hosts, as Kafka's `ReplicaManager.describeLogDirs` lists
 * every log of its dir, with the size of each (`UnifiedLog.size`), whether it was used since the start or not:
 * after a graceful stop and after a SIGKILL (a partition's last ledger left open), a restarted broker reports
 * the sizes it reported before, read from the stores without opening a partition.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../protocol/error-codes.js';
import { DescribeLogDirsApi, createDescribeLogDirsRequest, type DescribeLogDirsRequest } from '../../protocol/messages/035-describe-log-dirs.gen.js';
import { ProduceApi } from '../../protocol/messages/000-produce.gen.js';
import { buildRecordBatch } from '../../protocol/records/index.js';
import { KafkaClient } from '../../src/client/index.js';
import { BrokerProcess } from '../support/broker-process.js';
import { RawConnection } from '../support/raw-connection.js';
import { produceRequest } from '../support/requests.js';

const ADMIN = { 'ledgerline.admin.listener': 'http://127.0.0.1:0' };
const TOPICS = ['sized', 'other'];

function adminUrl(b: BrokerProcess): string {
  const line = [...b.logs].reverse().find((l) => l.includes('"admin HTTP endpoint listening"'));
  if (!line) throw new Error('no admin endpoint in the broker log');
  return (JSON.parse(line) as { url: string }).url;
}

/** Partitions of the test's topics the broker has open (ledgerline_partitions_open). */
async function openPartitions(b: BrokerProcess): Promise<number> {
  const text = await (await fetch(`${adminUrl(b)}/metrics`)).text();
  let n = 0;
  for (const t of TOPICS) n += Number(new RegExp(`^ledgerline_partitions_open\\{topic="${t}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
  return n;
}

/** `topic-partition` → size, of the test's topics, as the partition metrics report it. */
async function metricSizes(b: BrokerProcess): Promise<Map<string, bigint>> {
  const text = await (await fetch(`${adminUrl(b)}/metrics`)).text();
  const out = new Map<string, bigint>();
  for (const m of text.matchAll(/^ledgerline_partition_size_bytes\{topic="([^"]+)",partition="(\d+)"\} (\d+)$/gm)) {
    if (TOPICS.includes(m[1]!)) out.set(`${m[1]}-${m[2]}`, BigInt(m[3]!));
  }
  return new Map([...out].sort((a, b) => a[0].localeCompare(b[0])));
}

/** `topic-partition` → size, of the test's topics, from one DescribeLogDirs v4 (null: every partition). */
async function sizes(conn: RawConnection, topics: DescribeLogDirsRequest['topics'] = null): Promise<Map<string, bigint>> {
  const res = await conn.request(DescribeLogDirsApi, 4, createDescribeLogDirsRequest({ topics }));
  expect(res.errorCode).toBe(ErrorCode.NONE);
  expect(res.results).toHaveLength(1);
  const dir = res.results[0]!;
  expect(dir.errorCode).toBe(ErrorCode.NONE);
  expect(dir.totalBytes).toBeGreaterThan(0n);
  expect(dir.usableBytes).toBeGreaterThan(0n);
  const out = new Map<string, bigint>();
  for (const t of dir.topics) {
    if (!TOPICS.includes(t.name)) continue;
    for (const p of t.partitions) {
      expect(p).toMatchObject({ offsetLag: 0n, isFutureKey: false });
      out.set(`${t.name}-${p.partitionIndex}`, p.partitionSize);
    }
  }
  return new Map([...out].sort((a, b) => a[0].localeCompare(b[0])));
}

async function produce(b: BrokerProcess, topic: string, partition: number, values: string[]): Promise<void> {
  const client = await KafkaClient.connect({ bootstrap: b.bootstrap });
  try {
    const [r] = await client.produce([{ topic, partition, records: await buildRecordBatch(values.map((value) => ({ value }))) }]);
    expect(r!.errorCode).toBe(ErrorCode.NONE);
  } finally {
    await client.close();
  }
}

describe('DescribeLogDirs of partitions not open', () => {
  let broker: BrokerProcess | undefined;
  let conn: RawConnection | undefined;
  const dataDir = mkdtempSync(join(tmpdir(), 'ledgerline-logdirs-'));
  afterAll(async () => {
    conn?.destroy();
    await broker?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('reports every hosted partition with the size it had before a graceful stop or a SIGKILL, without opening it', async () => {
    broker = await BrokerProcess.start({ dataDir, configs: ADMIN });
    const client = await KafkaClient.connect({ bootstrap: broker.bootstrap });
    try {
      await client.createTopics([
        { name: 'sized', numPartitions: 6 },
        { name: 'other', numPartitions: 2 },
      ]);
    } finally {
      await client.close();
    }
    for (let p = 0; p < 5; p++) await produce(broker, 'sized', p, Array.from({ length: p + 1 }, (_, i) => `value-${p}-${i}`.repeat(p + 1)));
    await produce(broker, 'other', 1, ['x']);
    conn = await RawConnection.connect(broker.port);
    const before = await sizes(conn);
    // Every partition, the never-written ones (sized-5, other-0) with size 0.
    expect([...before.keys()]).toEqual(['other-0', 'other-1', 'sized-0', 'sized-1', 'sized-2', 'sized-3', 'sized-4', 'sized-5']);
    expect(before.get('sized-5')).toBe(0n);
    expect(before.get('other-0')).toBe(0n);
    for (let p = 1; p < 5; p++) expect(before.get(`sized-${p}`)!).toBeGreaterThan(before.get(`sized-${p - 1}`)!);
    conn.destroy();
    expect(await broker.stop()).toBe(0);

    broker = await BrokerProcess.start({ dataDir, configs: ADMIN });
    conn = await RawConnection.connect(broker.port);
    expect(await sizes(conn)).toEqual(before);
    expect(await openPartitions(broker)).toBe(0);
    // As the request asks: the partitions named, unknown topics and partitions left out.
    const filtered = await sizes(conn, [
      { topic: 'sized', partitions: [1, 3, 99] },
      { topic: 'no-such-topic', partitions: [0] },
      { topic: 'other', partitions: [] },
    ]);
    expect([...filtered]).toEqual([
      ['sized-1', before.get('sized-1')],
      ['sized-3', before.get('sized-3')],
    ]);
    expect(await openPartitions(broker)).toBe(0);

    // A produce after the restart opens that partition alone (a client's Metadata request naming the topic
    // would open all of its partitions); then a SIGKILL leaves its last ledger open.
    const produced = await conn.request(ProduceApi, 9, produceRequest([{ topic: 'sized', partition: 2, records: await buildRecordBatch([{ value: 'after-restart' }]) }]));
    expect(produced.responses[0]!.partitionResponses[0]!.errorCode).toBe(ErrorCode.NONE);
    const grown = await sizes(conn);
    expect(grown.get('sized-2')!).toBeGreaterThan(before.get('sized-2')!);
    expect(await openPartitions(broker)).toBe(1);
    conn.destroy();
    await broker.kill('SIGKILL');

    broker = await BrokerProcess.start({ dataDir, configs: ADMIN });
    conn = await RawConnection.connect(broker.port);
    expect(await sizes(conn)).toEqual(grown);
    // The partition metrics report the same sizes, from the same stored stats.
    expect(await metricSizes(broker)).toEqual(grown);
    expect(await openPartitions(broker)).toBe(0);
  });
});
