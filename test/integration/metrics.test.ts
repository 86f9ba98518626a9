/**
 * The admin HTTP endpoint of a real broker: Prometheus metrics that follow produce and fetch traffic.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRecordBatch } from '../../protocol/records/index.js';
import { KafkaClient } from '../../src/client/index.js';
import { BrokerProcess } from '../support/broker-process.js';
import { readPartition } from '../support/records.js';

describe('admin HTTP endpoint', () => {
  let broker: BrokerProcess;
  let adminUrl: string;

  beforeAll(async () => {
    broker = await BrokerProcess.start({ configs: { 'ledgerline.admin.listener': 'http://127.0.0.1:0' } });
    const line = broker.logs.find((l) => l.includes('"admin HTTP endpoint listening"'));
    expect(line).toBeDefined();
    adminUrl = (JSON.parse(line!) as { url: string }).url;
  });
  afterAll(async () => broker?.stop());

  it('reports requests, bytes in and out, partition offsets, the event loop and the group commits', async () => {
    let batch: Buffer;
    const client = await KafkaClient.connect({ bootstrap: broker.bootstrap });
    try {
      await client.createTopics([{ name: 'metered', numPartitions: 2 }]);
      batch = await buildRecordBatch([{ value: 'a' }, { value: 'b' }, { value: 'c' }]);
      const [r] = await client.produce([{ topic: 'metered', partition: 1, records: batch }]);
      expect(r!.errorCode).toBe(0);
      expect(await readPartition(client, 'metered', 1)).toHaveLength(3);
    } finally {
      await client.close();
    }
    const text = await (await fetch(`${adminUrl}/metrics`)).text();
    expect(text).toMatch(/^kafka_server_brokertopicmetrics_messagesin_total\{topic="metered"\} 3$/m);
    expect(text).toMatch(/^kafka_topic_partition_current_offset\{topic="metered",partition="1"\} 3$/m);
    expect(text).toMatch(/^kafka_topic_partition_current_offset\{topic="metered",partition="0"\} 0$/m);
    expect(text).toMatch(/^kafka_network_requestmetrics_requests_total\{request="Produce",version="[0-9]+"\} 1$/m);
    const bytesOut = /^kafka_server_brokertopicmetrics_bytesout_total\{topic="metered"\} (\d+)$/m.exec(text);
    expect(Number(bytesOut?.[1])).toBeGreaterThan(0);
    // What latency is made of: the event loop's delay, sampled since start, and the group commits of the appends
    // above (the produce's batch among their entries).
    expect(Number(/^ledgerline_event_loop_delay_seconds_count (\d+)$/m.exec(text)?.[1])).toBeGreaterThan(0);
    expect(Number(/^ledgerline_storage_group_commit_entries_sum (\d+)$/m.exec(text)?.[1])).toBeGreaterThanOrEqual(1);
    expect(Number(/^ledgerline_storage_group_commit_bytes_sum (\d+)$/m.exec(text)?.[1])).toBeGreaterThan(batch.length);
    expect(Number(/^ledgerline_storage_fsync_seconds_count (\d+)$/m.exec(text)?.[1])).toBeGreaterThanOrEqual(1);
    const health = (await (await fetch(`${adminUrl}/health`)).json()) as { status: string; topics: number };
    // metered and the internal __consumer_offsets and __transaction_state.
    expect(health).toMatchObject({ status: 'ok', topics: 3 });
  });
});
