/**
 * Partitions open on first use: a restarted broker (after a graceful stop or a SIGKILL) opens none of them
 * before it listens, and a produce or fetch opens just the partition it names, with everything acknowledged
 * before the restart there. The admin endpoint counts the open partitions and reports the offsets of every
 * partition, open or not.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../protocol/error-codes.js';
import { FetchApi, type FetchResponse } from '../../protocol/messages/001-fetch.gen.js';
import { ProduceApi } from '../../protocol/messages/000-produce.gen.js';
import { buildRecordBatch } from '../../protocol/records/index.js';
import { KafkaClient } from '../../src/client/index.js';
import { BrokerProcess } from '../support/broker-process.js';
import { RawConnection } from '../support/raw-connection.js';
import { decodeRecordSet } from '../support/records.js';
import { fetchRequest, produceRequest } from '../support/requests.js';

const ADMIN = { 'ledgerline.admin.listener': 'http://127.0.0.1:0' };

function adminUrl(b: BrokerProcess): string {
  const line = [...b.logs].reverse().find((l) => l.includes('"admin HTTP endpoint listening"'));
  if (!line) throw new Error('no admin endpoint in the broker log');
  return (JSON.parse(line) as { url: string }).url;
}

/** How many partitions of `topic` the broker has open, and the current offset it reports for each of its partitions. */
async function partitionMetrics(b: BrokerProcess, topic: string): Promise<{ open: number; offsets: Map<number, number> }> {
  const text = await (await fetch(`${adminUrl(b)}/metrics`)).text();
  const open = new RegExp(`^ledgerline_partitions_open\\{topic="${topic}"\\} (\\d+)$`, 'm').exec(text);
  const offsets = new Map<number, number>();
  const re = new RegExp(`^kafka_topic_partition_current_offset\\{topic="${topic}",partition="(\\d+)"\\} (\\d+)$`, 'gm');
  for (const m of text.matchAll(re)) offsets.set(Number(m[1]), Number(m[2]));
  return { open: open ? Number(open[1]) : 0, offsets };
}

/** The partitions of `topic` with a current offset above 0. */
function written(offsets: Map<number, number>): Array<[number, number]> {
  return [...offsets].filter(([, o]) => o > 0).sort((a, b) => a[0] - b[0]);
}

async function fetchValues(conn: RawConnection, topic: string, partition: number): Promise<string[]> {
  const res: FetchResponse = await conn.request(FetchApi, 12, fetchRequest({ topics: [{ topic, partitions: [{ partition, offset: 0n }] }] }));
  const p = res.responses[0]!.partitions[0]!;
  expect(p.errorCode).toBe(ErrorCode.NONE);
  return (await decodeRecordSet(p.records as Buffer)).records.map((r) => r.value?.toString() ?? '');
}

describe('lazy partitions', () => {
  let broker: BrokerProcess | undefined;
  // A directory of the test's own: the broker removes one it made itself when it stops.
  const dataDir = mkdtempSync(join(tmpdir(), 'ledgerline-lazy-'));
  afterAll(async () => {
    await broker?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('opens no partition at start, after a graceful stop or a SIGKILL, and opens on first use the one a request names', async () => {
    broker = await BrokerProcess.start({ dataDir, configs: ADMIN });
    const client = await KafkaClient.connect({ bootstrap: broker.bootstrap });
    try {
      await client.createTopics([{ name: 'wide', numPartitions: 300 }]);
      const [r] = await client.produce([{ topic: 'wide', partition: 5, records: await buildRecordBatch([{ value: 'before-stop' }]) }]);
      expect(r!.errorCode).toBe(ErrorCode.NONE);
    } finally {
      await client.close();
    }
    expect(await broker.stop()).toBe(0);

    broker = await BrokerProcess.start({ dataDir, configs: ADMIN });
    // Nothing open, yet every partition's offset reported, read from the stores.
    let m = await partitionMetrics(broker, 'wide');
    expect(m.open).toBe(0);
    expect(m.offsets.size).toBe(300);
    expect(written(m.offsets)).toEqual([[5, 1]]);
    let conn = await RawConnection.connect(broker.port);
    expect(await fetchValues(conn, 'wide', 5)).toEqual(['before-stop']);
    m = await partitionMetrics(broker, 'wide');
    expect(m.open).toBe(1);
    expect(written(m.offsets)).toEqual([[5, 1]]);
    const produced = await conn.request(ProduceApi, 9, produceRequest([{ topic: 'wide', partition: 250, records: await buildRecordBatch([{ value: 'before-kill' }]) }]));
    expect(produced.responses[0]!.partitionResponses[0]!.errorCode).toBe(ErrorCode.NONE);
    m = await partitionMetrics(broker, 'wide');
    expect(m.open).toBe(2);
    expect(written(m.offsets)).toEqual([[5, 1], [250, 1]]);
    conn.destroy();

    await broker.kill('SIGKILL');
    broker = await BrokerProcess.start({ dataDir, configs: ADMIN });
    // After the SIGKILL partition 250's last ledger is still open in its chain: its end is read from the ledger.
    m = await partitionMetrics(broker, 'wide');
    expect(m.open).toBe(0);
    expect(written(m.offsets)).toEqual([[5, 1], [250, 1]]);
    conn = await RawConnection.connect(broker.port);
    // The acknowledged produce is there once the partition is taken over on first use.
    expect(await fetchValues(conn, 'wide', 250)).toEqual(['before-kill']);
    expect((await partitionMetrics(broker, 'wide')).open).toBe(1);
    conn.destroy();
  });
});
