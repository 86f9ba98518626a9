/**
 * The ACL denial matrix, differential: every cell of test/support/acl-matrix.ts (an API and the resources it
 * touches) is run against Ledgerline and against Apache Kafka 4.4 with its StandardAuthorizer, both with the
 * same settings (authorizer.class.name, super.users, PLAIN users on a SASL_PLAINTEXT listener). Each cell is
 * run by a user holding exactly the cell's ACLs and by one holding none, and both answers must be Kafka's:
 * the same error codes in the same places, the same names in filtered lists, the same KIP-430 bit fields.
 *
 * Kafka comes from compat's Maven build (compat/kafka-broker); without it the test is skipped with the reason,
 * unless LEDGERLINE_REQUIRE_SECURITY_CLIENTS=1 (as CI sets it), which makes that a failure.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReferenceKafka } from '../../compat/lib/brokers.js';
import { COMPAT_DIR } from '../../compat/lib/paths.js';
import type { ApiDescriptor } from '../../protocol/api.js';
import { ErrorCode } from '../../protocol/error-codes.js';
import { CreateAclsApi } from '../../protocol/messages/030-create-acls.gen.js';
import { CreateTopicsApi, createCreateTopicsRequestCreatableTopic } from '../../protocol/messages/019-create-topics.gen.js';
import { DescribeAclsApi } from '../../protocol/messages/029-describe-acls.gen.js';
import { FindCoordinatorApi } from '../../protocol/messages/010-find-coordinator.gen.js';
import { InitProducerIdApi } from '../../protocol/messages/022-init-producer-id.gen.js';
import { MetadataApi } from '../../protocol/messages/003-metadata.gen.js';
import { OffsetCommitApi, createOffsetCommitRequestPartition, createOffsetCommitRequestTopic } from '../../protocol/messages/008-offset-commit.gen.js';
import { ProduceApi } from '../../protocol/messages/000-produce.gen.js';
import { SaslAuthenticateApi } from '../../protocol/messages/036-sasl-authenticate.gen.js';
import { SaslHandshakeApi } from '../../protocol/messages/017-sasl-handshake.gen.js';
import { buildRecordBatch } from '../../protocol/records/index.js';
import { STANDARD_AUTHORIZER } from '../../src/security/acl/authorizer.js';
import { AclOperation, AclPermissionType, PatternType, ResourceType } from '../../src/security/acl/model.js';
import { aclCreation, CELLS, GROUP, outcome, settled, TOPIC, type CellClient } from '../support/acl-matrix.js';
import { BrokerProcess } from '../support/broker-process.js';
import { RawConnection, waitFor } from '../support/raw-connection.js';
import { metadataRequest, produceRequest } from '../support/requests.js';

const REQUIRE = process.env.LEDGERLINE_REQUIRE_SECURITY_CLIENTS === '1';
const kafkaMissing = existsSync(join(COMPAT_DIR, 'kafka-broker', 'target', 'classpath.txt')) ? null : 'the Kafka jars are not resolved (run `npm run compat -- --only kafka` once)';
if (kafkaMissing && !REQUIRE) console.warn(`ACL denial matrix skipped: ${kafkaMissing}`);

const userOf = (i: number): string => `u${i}`;
const JAAS = [
  'org.apache.kafka.common.security.plain.PlainLoginModule required',
  'user_admin="admin-secret"',
  'user_bob="bob-secret"',
  ...CELLS.map((_, i) => `user_${userOf(i)}="${userOf(i)}-secret"`),
].join(' ') + ';';

/** The settings both brokers run with. PLAINTEXT (User:ANONYMOUS) carries Kafka's own controller traffic. */
const SETTINGS: Record<string, string> = {
  'authorizer.class.name': STANDARD_AUTHORIZER,
  'super.users': 'User:admin;User:ANONYMOUS',
  'sasl.enabled.mechanisms': 'PLAIN',
  'listener.name.sasl_plaintext.plain.sasl.jaas.config': JAAS,
  'group.initial.rebalance.delay.ms': '0',
  'auto.create.topics.enable': 'true',
};

/** A connection signed in as `user` with SASL PLAIN (SaslHandshake v1, SaslAuthenticate v2). */
async function signIn(port: number, user: string, password: string): Promise<CellClient & { close(): void }> {
  const conn = await RawConnection.connect(port);
  const hs = await conn.request(SaslHandshakeApi, 1, { mechanism: 'PLAIN' });
  if (hs.errorCode !== ErrorCode.NONE) throw new Error(`SaslHandshake: ${hs.errorCode}`);
  const auth = await conn.request(SaslAuthenticateApi, 2, { authBytes: Buffer.from(`\0${user}\0${password}`) });
  if (auth.errorCode !== ErrorCode.NONE) throw new Error(`SaslAuthenticate as ${user}: ${auth.errorCode} ${auth.errorMessage}`);
  return {
    request: <Req, Res>(api: ApiDescriptor<Req, Res>, version: number, body: Req) => conn.request(api, version, body, 30_000),
    close: () => conn.destroy(),
  };
}

type Outcomes = Map<string, { allowed: string[]; denied: string[] }>;

/** Sets the stage as the super user (the topic with records, the group's commit, the coordinators), grants each cell's user its ACLs, and runs the matrix. */
async function runMatrix(port: number, label: string): Promise<Outcomes> {
  const admin = await signIn(port, 'admin', 'admin-secret');
  const clients: (CellClient & { close(): void })[] = [admin];
  try {
    const created = await admin.request(CreateTopicsApi, 7, CreateTopicsApi.request.create({ topics: [createCreateTopicsRequestCreatableTopic({ name: TOPIC, numPartitions: 1, replicationFactor: 1 })], timeoutMs: 30_000 }));
    expect(created.topics[0]!.errorCode, `${label}: creating ${TOPIC}`).toBe(ErrorCode.NONE);
    await waitFor(`${label}: a leader for ${TOPIC}`, async () => {
      const md = await admin.request(MetadataApi, 12, metadataRequest([TOPIC], false));
      return (md.topics[0]?.partitions[0]?.leaderId ?? -1) >= 0;
    }, 30_000);
    await waitFor(`${label}: records in ${TOPIC}`, async () => {
      const res = await admin.request(ProduceApi, 9, produceRequest([{ topic: TOPIC, partition: 0, records: await buildRecordBatch([{ value: 'a' }, { value: 'b' }, { value: 'c' }]) }]));
      return res.responses[0]!.partitionResponses[0]!.errorCode === ErrorCode.NONE;
    }, 30_000, 200);
    // Kafka creates its offsets and transaction-state topics on the first FindCoordinator for them.
    for (const keyType of [0, 1]) {
      const found = await settled(() => admin.request(FindCoordinatorApi, 4, FindCoordinatorApi.request.create({ keyType, coordinatorKeys: [keyType === 0 ? GROUP : 'acl-setup'] })), (r) => r.coordinators[0]!.errorCode);
      expect(found.coordinators[0]!.errorCode, `${label}: FindCoordinator`).toBe(ErrorCode.NONE);
    }
    const commit = await settled(
      () =>
        admin.request(
          OffsetCommitApi,
          8,
          OffsetCommitApi.request.create({
            groupId: GROUP,
            generationIdOrMemberEpoch: -1,
            memberId: '',
            groupInstanceId: null,
            topics: [createOffsetCommitRequestTopic({ name: TOPIC, partitions: [createOffsetCommitRequestPartition({ partitionIndex: 0, committedOffset: 2n, committedMetadata: null })] })],
          }),
        ),
      (r) => r.topics[0]!.partitions[0]!.errorCode,
    );
    expect(commit.topics[0]!.partitions[0]!.errorCode, `${label}: the setup commit`).toBe(ErrorCode.NONE);
    const init = await settled(() => admin.request(InitProducerIdApi, 4, InitProducerIdApi.request.create({ transactionalId: 'acl-setup', transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 })), (r) => r.errorCode);
    expect(init.errorCode, `${label}: the setup InitProducerId`).toBe(ErrorCode.NONE);

    const creations = CELLS.flatMap((cell, i) => cell.grants.map((g) => aclCreation(`User:${userOf(i)}`, g)));
    const res = await admin.request(CreateAclsApi, 3, { creations });
    expect(res.results.filter((r) => r.errorCode !== ErrorCode.NONE), `${label}: CreateAcls`).toEqual([]);
    // Kafka's brokers apply ACLs as they replay the metadata log; DescribeAcls reads what the authorizer holds.
    await waitFor(`${label}: the ACLs in the authorizer`, async () => {
      const d = await admin.request(DescribeAclsApi, 3, {
        resourceTypeFilter: ResourceType.ANY,
        resourceNameFilter: null,
        patternTypeFilter: PatternType.ANY,
        principalFilter: null,
        hostFilter: null,
        operation: AclOperation.ANY,
        permissionType: AclPermissionType.ANY,
      });
      return d.resources.reduce((n, r) => n + r.acls.length, 0) >= creations.length;
    }, 30_000);

    const bob = await signIn(port, 'bob', 'bob-secret');
    clients.push(bob);
    const out: Outcomes = new Map();
    for (const [i, cell] of CELLS.entries()) {
      const user = await signIn(port, userOf(i), `${userOf(i)}-secret`);
      clients.push(user);
      const allowed = outcome(await cell.run(user, `${i}a`), cell.ignore);
      const denied = outcome(await cell.run(bob, `${i}d`), cell.ignore);
      out.set(cell.name, { allowed, denied });
    }
    return out;
  } finally {
    for (const c of clients) c.close();
  }
}

const skip = kafkaMissing !== null && !REQUIRE;

describe.skipIf(skip)('ACL denial matrix against Apache Kafka 4.4 with StandardAuthorizer', () => {
  let ledgerline: BrokerProcess | undefined;
  let kafka: ReferenceKafka | undefined;
  let kafkaLogs = '';
  const results: { ledgerline?: Outcomes; kafka?: Outcomes } = {};

  beforeAll(async () => {
    if (kafkaMissing) throw new Error(`LEDGERLINE_REQUIRE_SECURITY_CLIENTS=1, but ${kafkaMissing}`);
    ledgerline = await BrokerProcess.start({ configs: { listeners: 'PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0', ...SETTINGS } });
    results.ledgerline = await runMatrix(ledgerline.ports.get('SASL_PLAINTEXT')!, 'Ledgerline');
    await ledgerline.stop();
    ledgerline = undefined;
    kafkaLogs = mkdtempSync(join(tmpdir(), 'acl-matrix-kafka-'));
    kafka = new ReferenceKafka({ label: 'kafka', logDir: kafkaLogs, heapMiB: 512, keepData: false, extraListeners: [{ name: 'SASL_PLAINTEXT', protocol: 'SASL_PLAINTEXT' }], settings: SETTINGS });
    const started = await kafka.start();
    if (!started.ok) throw new Error(`Kafka did not start: ${started.reason}`);
    results.kafka = await runMatrix(kafka.listenerPorts.get('SASL_PLAINTEXT')!, 'Kafka');
  }, 300_000);

  afterAll(async () => {
    await ledgerline?.stop();
    await kafka?.stop();
    if (kafkaLogs) rmSync(kafkaLogs, { recursive: true, force: true });
  });

  it('denies the user without ACLs in every cell that needs one, as Kafka does', () => {
    for (const cell of CELLS) {
      if (cell.deniedCode < 0) continue;
      const k = results.kafka!.get(cell.name)!;
      // The matrix checks itself against Kafka: the denial it expects is Kafka's.
      expect(k.denied.some((l) => l.endsWith(`=${cell.deniedCode}`)), `${cell.name}: Kafka denies with ${cell.deniedCode}: ${k.denied.join(' ')}`).toBe(true);
    }
  });

  it('answers every cell, allowed and denied, exactly as Kafka does', () => {
    const differ: string[] = [];
    for (const cell of CELLS) {
      const l = results.ledgerline!.get(cell.name)!;
      const k = results.kafka!.get(cell.name)!;
      for (const who of ['allowed', 'denied'] as const) {
        if (JSON.stringify(l[who]) !== JSON.stringify(k[who])) differ.push(`${cell.name} (${who}):\n  Ledgerline ${l[who].join(' ')}\n  Kafka      ${k[who].join(' ')}`);
      }
    }
    if (process.env.LEDGERLINE_ACL_MATRIX_DUMP) {
      for (const cell of CELLS) console.log(`${cell.name}\n  allowed ${results.kafka!.get(cell.name)!.allowed.join(' ')}\n  denied  ${results.kafka!.get(cell.name)!.denied.join(' ')}`);
    }
    expect(differ, differ.join('\n')).toEqual([]);
    console.log(`ACL denial matrix: ${CELLS.length} cells × 2 principals agree with Kafka 4.4`);
  });
});
