/**
 * A mirror topic from one Ledgerline cluster to another while both are killed: records are produced to the
 * source without a pause; the source broker is SIGKILLed mid-stream and restarted, then the mirror's broker is
 * SIGKILLed and restarted (its cursor is its log end offset, durable with the data). At the end the mirror holds
 * every batch of the source at the same offsets with the same bytes, and every acknowledged record exactly once:
 * nothing lost, nothing copied twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRecordBatch } from '../../protocol/records/index.js';
import { KafkaClient } from '../../src/client/client.js';
import { BrokerProcess } from '../support/broker-process.js';
import { admin, firstBatchDifference, readAllBatches, recordsByOffset, waitFor } from '../support/mirror-check.js';

const PARTITIONS = 2;
const TOPIC = 'events';

describe.sequential('a mirror topic between Ledgerline clusters, with brokers killed', () => {
  let sourceBroker: BrokerProcess;
  let mirrorBroker: BrokerProcess;

  beforeAll(async () => {
    [sourceBroker, mirrorBroker] = await Promise.all([
      BrokerProcess.start(),
      BrokerProcess.start({ configs: { 'ledgerline.admin.listener': 'http://127.0.0.1:0', 'auto.create.topics.enable': 'false' } }),
    ]);
  }, 60_000);

  afterAll(async () => {
    await Promise.allSettled([sourceBroker?.stop(), mirrorBroker?.stop()]);
  });

  const adminUrl = (): string => {
    const line = [...mirrorBroker.logs].reverse().find((l) => l.includes('admin HTTP endpoint listening'))!;
    return (JSON.parse(line) as { url: string }).url;
  };

  it("sets aside a mirror whose source topic is deleted, with the reason, while the link's other mirrors go on", async () => {
    const setup = await KafkaClient.connect({ bootstrap: sourceBroker.bootstrap });
    try {
      await setup.createTopics([{ name: 'gone', numPartitions: 1 }, { name: 'kept', numPartitions: 1 }]);
      await setup.waitForTopics(['gone', 'kept']);
      expect((await admin(adminUrl(), 'PUT', '/v1/links/side', { bootstrapServers: sourceBroker.bootstrap })).status).toBe(200);
      for (const topic of ['gone', 'kept']) expect((await admin(adminUrl(), 'POST', '/v1/mirrors', { topic, link: 'side' })).status).toBe(201);
      await setup.deleteTopics(['gone']);
      for (let i = 0; i < 5; i++) await setup.produce([{ topic: 'kept', partition: 0, records: await buildRecordBatch([{ key: `k${i}`, value: `v${i}` }]) }], { acks: -1 });
      await waitFor('the kept mirror to copy its 5 records', async () => {
        const { json } = await admin<{ partitions: { position: number }[] }>(adminUrl(), 'GET', '/v1/mirrors/kept');
        return json.partitions[0]?.position === 5 ? true : undefined;
      }, 30_000, 100);
      const gone = await waitFor('the deleted source topic to show as the reason', async () => {
        const { json } = await admin<{ partitions: { error: string | null }[] }>(adminUrl(), 'GET', '/v1/mirrors/gone');
        return json.partitions[0]?.error ? json.partitions[0].error : undefined;
      }, 30_000, 100);
      expect(gone).toMatch(/gone|UNKNOWN_TOPIC/);
    } finally {
      await setup.close();
    }
  }, 60_000);

  it("refuses a mirror or an active-active selection that the topic's tenant policy replication.clusters does not allow", async () => {
    const tenant = await admin(adminUrl(), 'PUT', '/v1/tenants/acme', { principals: [], policies: { 'replication.clusters': 'side' }, namespaces: { sealed: { policies: { 'replication.clusters': '' } } } });
    expect(tenant.status).toBe(200);
    expect((await admin(adminUrl(), 'PUT', '/v1/links/other', { bootstrapServers: sourceBroker.bootstrap })).status).toBe(200);
    const refused = await admin<{ error: string }>(adminUrl(), 'POST', '/v1/mirrors', { topic: 'acme.orders.events', link: 'other', sourceTopic: TOPIC });
    expect(refused.status).toBe(403);
    expect(refused.json.error).toMatch(/replication.clusters .* does not allow cluster link other/);
    const sealed = await admin<{ error: string }>(adminUrl(), 'PUT', '/v1/replicated-topics/acme.sealed.*', { links: ['side'] });
    expect(sealed.status).toBe(403);
    expect((await admin(adminUrl(), 'PUT', '/v1/replicated-topics/acme.open.*', { links: ['side'] })).status).toBe(200);
    expect((await admin(adminUrl(), 'DELETE', '/v1/replicated-topics/acme.open.*')).status).toBe(204);
  });

  it('copies every acknowledged record exactly once across a SIGKILL of the source and of the mirror', async () => {
    const setup = await KafkaClient.connect({ bootstrap: sourceBroker.bootstrap });
    await setup.createTopics([{ name: TOPIC, numPartitions: PARTITIONS, configs: { 'retention.ms': '-1' } }]);
    await setup.waitForTopics([TOPIC]);
    await setup.close();
    expect((await admin(adminUrl(), 'PUT', '/v1/links/upstream', { bootstrapServers: sourceBroker.bootstrap })).status).toBe(200);
    expect((await admin(adminUrl(), 'POST', '/v1/mirrors', { topic: TOPIC, link: 'upstream' })).status).toBe(201);

    // The producer: batches of 10 records with unique values, acks=all, retried through the kill; it counts what
    // was acknowledged (a batch whose answer was lost may be stored without being counted: the check below is
    // on what the source holds, and every acknowledged value must be there once).
    const acknowledged = new Set<string>();
    let stop = false;
    let seq = 0;
    const produce = (async () => {
      let client: KafkaClient | null = null;
      while (!stop) {
        try {
          client ??= await KafkaClient.connect({ bootstrap: sourceBroker.bootstrap, requestTimeoutMs: 5_000, connectTimeoutMs: 2_000 });
          const values = Array.from({ length: 10 }, () => `record-${seq++}`);
          const partition = seq % PARTITIONS;
          const [r] = await client.produce([{ topic: TOPIC, partition, records: await buildRecordBatch(values.map((v) => ({ key: v, value: v }))) }], { acks: -1 });
          if (r!.errorCode === 0) for (const v of values) acknowledged.add(v);
        } catch {
          await client?.close().catch(() => undefined);
          client = null;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      await client?.close().catch(() => undefined);
    })();

    const mirrorClient = async (): Promise<KafkaClient> => KafkaClient.connect({ bootstrap: mirrorBroker.bootstrap });
    const mirroredCount = async (): Promise<number> => {
      const c = await mirrorClient();
      try {
        const ends = await c.listOffsets(Array.from({ length: PARTITIONS }, (_, p) => ({ topic: TOPIC, partition: p, timestamp: -1n })));
        return ends.reduce((n, e) => n + Number(e.offset), 0);
      } finally {
        await c.close();
      }
    };
    await waitFor('the mirror to copy 500 records', async () => ((await mirroredCount()) >= 500 ? true : undefined), 30_000, 100);
    await sourceBroker.kill('SIGKILL');
    await sourceBroker.restart();
    const before = await mirroredCount();
    await waitFor('the mirror to copy after the source restarted', async () => ((await mirroredCount()) >= before + 500 ? true : undefined), 60_000, 100);
    await mirrorBroker.kill('SIGKILL');
    await mirrorBroker.restart();
    const after = await mirroredCount();
    await waitFor('the mirror to copy after its own restart', async () => ((await mirroredCount()) >= after + 500 ? true : undefined), 60_000, 100);
    stop = true;
    await produce;

    const source = await KafkaClient.connect({ bootstrap: sourceBroker.bootstrap });
    const mirror = await mirrorClient();
    try {
      const ends = await source.listOffsets(Array.from({ length: PARTITIONS }, (_, p) => ({ topic: TOPIC, partition: p, timestamp: -1n })));
      await waitFor('the mirror to reach the source end', async () => {
        const m = await mirror.listOffsets(Array.from({ length: PARTITIONS }, (_, p) => ({ topic: TOPIC, partition: p, timestamp: -1n })));
        return m.every((e, p) => e.offset === ends[p]!.offset) ? true : undefined;
      }, 60_000, 100);
      const values = new Map<string, number>();
      for (let p = 0; p < PARTITIONS; p++) {
        const [s, m] = await Promise.all([readAllBatches(source, TOPIC, p), readAllBatches(mirror, TOPIC, p)]);
        expect(firstBatchDifference(s, m), `${TOPIC}-${p}`).toBeNull();
        for (const r of (await recordsByOffset(m)).values()) {
          const v = Buffer.from((JSON.parse(r) as string[])[1]!, 'base64').toString();
          values.set(v, (values.get(v) ?? 0) + 1);
        }
      }
      const missing = [...acknowledged].filter((v) => !values.has(v));
      expect(missing, 'acknowledged records missing from the mirror').toEqual([]);
      expect([...values].filter(([, n]) => n > 1), 'records copied twice').toEqual([]);
      expect(acknowledged.size).toBeGreaterThan(1500);
    } finally {
      await Promise.allSettled([source.close(), mirror.close()]);
    }
  }, 240_000);
});
