/**
 * Tenants on a real broker, driven by kafkajs over SASL PLAIN: tenants created with the admin API
 * (PUT /v1/tenants/<name>); a tenant's principal creates, writes and reads topics and groups under its prefix
 * only, sees no other tenant's topics or groups, and gets its tenant's and namespace's policies as the configs of
 * its topics (retention, required end-to-end encryption); a principal in no tenant sees everything.
 */
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrokerProcess } from '../support/broker-process.js';

let broker: BrokerProcess;
let adminUrl: string;

beforeAll(async () => {
  broker = await BrokerProcess.start({
    configs: {
      listeners: 'PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0',
      'sasl.enabled.mechanisms': 'PLAIN',
      'listener.name.sasl_plaintext.plain.sasl.jaas.config':
        'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret" user_bob="bob-secret" user_ops="ops-secret";',
      'ledgerline.admin.listener': 'http://127.0.0.1:0',
      'group.initial.rebalance.delay.ms': '0',
    },
  });
  adminUrl = (JSON.parse(broker.logs.find((l) => l.includes('admin HTTP endpoint listening'))!) as { url: string }).url;
  for (const [name, body] of [
    ['acme', { principals: ['User:alice'], policies: { 'retention.ms': '3600000' }, namespaces: { secure: { policies: { 'ledgerline.encryption.required': 'true' } } } }],
    ['globex', { principals: ['User:bob'], policies: {}, namespaces: {} }],
  ] as const) {
    const res = await fetch(`${adminUrl}/v1/tenants/${name}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(res.status, await res.clone().text()).toBe(200);
  }
}, 60_000);

afterAll(async () => {
  await broker?.stop();
});

const client = (user: string) =>
  new Kafka({ clientId: `tenants-${user}`, brokers: [`127.0.0.1:${broker.ports.get('SASL_PLAINTEXT')!}`], sasl: { mechanism: 'plain', username: user, password: `${user}-secret` }, logLevel: logLevel.NOTHING, retry: { retries: 2 } });

describe('tenants', () => {
  it('confine a tenant principal to its own topics and groups', async () => {
    const alice = client('alice');
    const admin = alice.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'acme.billing.invoices', numPartitions: 1 }, { topic: 'acme.secure.cards', numPartitions: 1 }], waitForLeaders: true });
    await expect(admin.createTopics({ topics: [{ topic: 'globex.billing.x', numPartitions: 1 }] })).rejects.toMatchObject({ errors: [{ type: 'TOPIC_AUTHORIZATION_FAILED' }] });
    await expect(admin.createTopics({ topics: [{ topic: 'untenanted', numPartitions: 1 }] })).rejects.toMatchObject({ errors: [{ type: 'TOPIC_AUTHORIZATION_FAILED' }] });

    const bob = client('bob').admin();
    await bob.connect();
    await bob.createTopics({ topics: [{ topic: 'globex.orders.o', numPartitions: 1 }], waitForLeaders: true });
    expect((await bob.listTopics()).sort()).toEqual(['globex.orders.o']);
    expect((await admin.listTopics()).sort()).toEqual(['acme.billing.invoices', 'acme.secure.cards']);

    // The tenant's and the namespace's policies are the topics' configs.
    const described = await admin.describeConfigs({ resources: [{ type: 2, name: 'acme.billing.invoices', configNames: ['retention.ms'] }], includeSynonyms: false });
    expect(described.resources[0]!.configEntries.find((c) => c.configName === 'retention.ms')!.configValue).toBe('3600000');

    const producer = alice.producer();
    await producer.connect();
    await producer.send({ topic: 'acme.billing.invoices', messages: [{ value: 'i-1' }, { value: 'i-2' }] });
    // acme.secure requires end-to-end encryption: a plaintext record is refused.
    await expect(producer.send({ topic: 'acme.secure.cards', acks: -1, messages: [{ value: 'plaintext' }] })).rejects.toThrow();
    await expect(producer.send({ topic: 'globex.orders.o', messages: [{ value: 'x' }] })).rejects.toThrow();
    await producer.disconnect();

    const consumer = alice.consumer({ groupId: 'acme.readers' });
    await consumer.connect();
    await consumer.subscribe({ topic: 'acme.billing.invoices', fromBeginning: true });
    const seen: string[] = [];
    await consumer.run({ eachMessage: async ({ message }) => void seen.push(message.value!.toString()) });
    const deadline = Date.now() + 30_000;
    while (seen.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await consumer.disconnect();
    expect(seen).toEqual(['i-1', 'i-2']);
    // Another tenant's group: FindCoordinator answers GROUP_AUTHORIZATION_FAILED, which kafkajs reports so.
    await expect(admin.fetchOffsets({ groupId: 'globex.readers', topics: ['acme.billing.invoices'] })).rejects.toMatchObject({ name: 'KafkaJSGroupCoordinatorNotFound' });

    expect((await admin.listGroups()).groups.map((g) => g.groupId)).toEqual(['acme.readers']);
    expect((await bob.listGroups()).groups).toEqual([]);
    await admin.disconnect();
    await bob.disconnect();

    // A principal in no tenant is not confined.
    const ops = client('ops').admin();
    await ops.connect();
    expect((await ops.listTopics()).filter((t) => !t.startsWith('__')).sort()).toEqual(['acme.billing.invoices', 'acme.secure.cards', 'globex.orders.o']);
    await ops.disconnect();
  }, 90_000);
});
