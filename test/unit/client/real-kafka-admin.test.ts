/**
 * KafkaAdmin against a real Apache Kafka 4.4.0 broker (KRaft, one node), started with the compatibility
 * suite's launcher, as real-kafka.test.ts does. Skipped, with the reason, when Java or the Kafka jars are not
 * on this machine (`npm run compat -- --only kafka` resolves the jars into compat/.work/).
 *
 * What a geo-replication source read needs: a topic's config override with its source, the groups of the
 * cluster, and a group's committed offsets, here committed as a "simple" group does (OffsetCommit with
 * generation -1 and no member id, no JoinGroup).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReferenceKafka } from '../../../compat/lib/brokers.js';
import { COMPAT_DIR } from '../../../compat/lib/paths.js';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { OffsetCommitApi } from '../../../protocol/messages/008-offset-commit.gen.js';
import type { OffsetCommitResponse } from '../../../protocol/messages/008-offset-commit.gen.js';
import { OffsetFetchApi } from '../../../protocol/messages/009-offset-fetch.gen.js';
import { FindCoordinatorApi } from '../../../protocol/messages/010-find-coordinator.gen.js';
import { ZERO_UUID } from '../../../protocol/wire/uuid.js';
import { ConfigSource, KafkaAdmin } from '../../../src/client/admin.js';
import { KafkaClient } from '../../../src/client/client.js';

function whyNoKafka(): string | null {
  const java = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (java.error || java.status !== 0) return 'java is not installed';
  if (!existsSync(join(COMPAT_DIR, 'kafka-broker', 'target', 'classpath.txt'))) {
    return 'the Kafka jars are not resolved (run `npm run compat -- --only kafka` once)';
  }
  return null;
}

const skipReason = whyNoKafka();
if (skipReason) console.warn(`admin client tests against Apache Kafka skipped: ${skipReason}`);

describe.skipIf(skipReason !== null)('KafkaAdmin against Apache Kafka 4.4', () => {
  let kafka: ReferenceKafka;
  let client: KafkaClient;
  let admin: KafkaAdmin;
  const topic = `admin-test-${process.pid}`;
  const group = `admin-test-group-${process.pid}`;

  beforeAll(async () => {
    kafka = new ReferenceKafka({ label: 'kafka', logDir: mkdtempSync(join(tmpdir(), 'admin-test-kafka-logs-')), heapMiB: 512, keepData: false });
    const started = await kafka.start();
    if (!started.ok) throw new Error(`Kafka did not start: ${started.reason}`);
    client = await KafkaClient.connect({ bootstrap: kafka.bootstrap, clientId: 'admin-test' });
    admin = new KafkaAdmin(client);
  }, 120_000);

  afterAll(async () => {
    await client?.close();
    await kafka?.stop();
  }, 60_000);

  it('describes a topic override as DYNAMIC_TOPIC_CONFIG and the rest with their sources', async () => {
    const created = await client.createTopics([{ name: topic, numPartitions: 2, replicationFactor: 1, configs: { 'cleanup.policy': 'compact' } }]);
    expect(created[0]!.errorCode).toBe(0);
    await client.waitForTopics([topic], { timeoutMs: 20_000 });

    const result = await admin.describeTopicConfigs([topic, `${topic}-missing`]);
    const own = result.get(topic)!;
    expect(own.errorCode).toBe(0);
    expect(own.configs.find((c) => c.name === 'cleanup.policy')).toEqual({
      name: 'cleanup.policy',
      value: 'compact',
      source: ConfigSource.DYNAMIC_TOPIC_CONFIG,
      isSensitive: false,
      readOnly: false,
    });
    // Not set on the topic nor the broker: Kafka's default.
    expect(own.configs.find((c) => c.name === 'max.message.bytes')?.source).toBe(ConfigSource.DEFAULT_CONFIG);
    expect(own.configs.filter((c) => c.source === ConfigSource.DYNAMIC_TOPIC_CONFIG).map((c) => c.name)).toEqual(['cleanup.policy']);
    expect(result.get(`${topic}-missing`)).toMatchObject({ errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, configs: [] });
  });

  it('lists a group committed to with generation -1, and fetches its offsets from its coordinator', async () => {
    const conn = await client.cluster.anyConnection();
    // Kafka 4.4 serves FindCoordinator v6 (batched) and OffsetFetch v10, of which the admin uses v9.
    expect(conn.versionFor(FindCoordinatorApi)).toBeGreaterThanOrEqual(4);
    expect(conn.versions!.brokerRange(OffsetFetchApi.apiKey)!.max).toBeGreaterThanOrEqual(10);

    // The first FindCoordinator creates __consumer_offsets; it answers COORDINATOR_NOT_AVAILABLE until that has a leader.
    let found = await admin.findGroupCoordinators([group]);
    for (let i = 0; i < 100 && !found.coordinators.has(group); i++) {
      expect([ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS]).toContain(found.errors.get(group));
      await new Promise((r) => setTimeout(r, 200));
      found = await admin.findGroupCoordinators([group]);
    }
    expect([...found.coordinators]).toEqual([[group, 1]]);

    const coordinator = await client.cluster.connectionTo(found.coordinators.get(group)!);
    // OffsetCommit v10 names topics by id; v9 names them. Generation -1 and no member id: a "simple" commit,
    // which Kafka accepts for a group with no members, creating it as an empty classic group.
    const commitVersion = coordinator.versionFor(OffsetCommitApi, { max: 9 });
    const commit = (): Promise<OffsetCommitResponse> =>
      coordinator.request(
        OffsetCommitApi,
        OffsetCommitApi.request.create({
          groupId: group,
          generationIdOrMemberEpoch: -1,
          memberId: '',
          groupInstanceId: null,
          topics: [
            {
              name: topic,
              topicId: ZERO_UUID,
              partitions: [
                { partitionIndex: 0, committedOffset: 5n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: 'mirrored' },
                { partitionIndex: 1, committedOffset: 7n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: null },
              ],
            },
          ],
        }),
        { version: commitVersion },
      );
    let committed = await commit();
    const codes = (r: OffsetCommitResponse): number[] => r.topics.flatMap((t) => t.partitions.map((p) => p.errorCode));
    for (let i = 0; i < 50 && codes(committed).some((c) => c === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS || c === ErrorCode.NOT_COORDINATOR); i++) {
      await new Promise((r) => setTimeout(r, 200));
      committed = await commit();
    }
    expect(codes(committed)).toEqual([0, 0]);

    const groups = await admin.listGroups();
    expect(groups.find((g) => g.groupId === group)).toEqual({ groupId: group, protocolType: '', groupState: 'Empty', groupType: 'classic' });

    const offsets = await admin.fetchGroupOffsets([group, `${group}-never`]);
    expect(offsets.get(group)!.errorCode).toBe(0);
    expect(offsets.get(group)!.offsets.sort((a, b) => a.partition - b.partition)).toEqual([
      { topic, partition: 0, offset: 5n, leaderEpoch: -1, metadata: 'mirrored', errorCode: 0 },
      // Kafka stores a null metadata as the empty string (OffsetAndMetadata.NO_METADATA).
      { topic, partition: 1, offset: 7n, leaderEpoch: -1, metadata: '', errorCode: 0 },
    ]);
    expect(offsets.get(`${group}-never`)!.offsets).toEqual([]);

    const described = await admin.describeGroups([group]);
    expect(described.get(group)).toEqual({ errorCode: 0, state: 'Empty', protocolType: '', members: 0 });
  });
});
