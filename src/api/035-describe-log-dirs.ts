// DescribeLogDirs v1-5 (v0 removed by Kafka 4) · v2+: flexible · v3: top-level errorCode · v4: total and
// usable bytes (KIP-827) · v5: whether the directory is cordoned (KIP-1066); this one never is. Ledgerline
// keeps every partition in one data directory.
//
// Authorization (KafkaApis.handleDescribeLogDirsRequest): DESCRIBE on the cluster, else no log dirs and
// CLUSTER_AUTHORIZATION_FAILED at the top level (v3+; v1-2 have no field for it and read an empty answer).
import { statfs } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  DescribeLogDirsApi,
  createDescribeLogDirsResponse,
  createDescribeLogDirsResponseDescribeLogDirsPartition,
  createDescribeLogDirsResponseDescribeLogDirsResult,
  createDescribeLogDirsResponseDescribeLogDirsTopic,
} from '../../protocol/messages/035-describe-log-dirs.gen.js';
import { ErrorCode } from '../../protocol/error-codes.js';
import { AclOperation } from './access.js';
import { defineHandler } from './handler.js';

export const describeLogDirs = defineHandler({
  api: DescribeLogDirsApi,
  uses: ['config', 'partitions'],
  versions: { min: 1, max: 5 },
  async handle(req, ctx) {
    const { config, partitions } = ctx.services;
    if (!ctx.access.authorizeCluster(AclOperation.DESCRIBE)) {
      return createDescribeLogDirsResponse({ errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, results: [] });
    }
    const wanted = req.topics === null ? null : wantedPartitions(req.topics);
    // Every hosted partition asked for, opened since the start or not (Kafka lists every log of the dir,
    // `ReplicaManager.describeLogDirs`); unknown topics and partitions are left out, and so are topics none
    // of whose partitions was asked for. Offset lag is 0: the high watermark is the log end offset here.
    const byTopic = new Map<string, ReturnType<typeof createDescribeLogDirsResponseDescribeLogDirsPartition>[]>();
    for (const s of await partitions.hostedStats(wanted)) {
      let list = byTopic.get(s.topic);
      if (!list) byTopic.set(s.topic, (list = []));
      list.push(createDescribeLogDirsResponseDescribeLogDirsPartition({ partitionIndex: s.partition, partitionSize: BigInt(s.sizeInBytes), offsetLag: 0n, isFutureKey: false }));
    }
    const dir = resolve(config.dataDir);
    const fs = await statfs(dir);
    const result = createDescribeLogDirsResponseDescribeLogDirsResult({
      logDir: dir,
      topics: [...byTopic].map(([name, partitions]) => createDescribeLogDirsResponseDescribeLogDirsTopic({ name, partitions })),
      totalBytes: BigInt(fs.blocks) * BigInt(fs.bsize),
      usableBytes: BigInt(fs.bavail) * BigInt(fs.bsize),
    });
    return createDescribeLogDirsResponse({ results: [result] });
  },
});

/** The partitions a request names, by topic (a topic named twice: the union, as Kafka's set of TopicPartitions). */
function wantedPartitions(topics: readonly { topic: string; partitions: readonly number[] }[]): Map<string, Set<number>> {
  const out = new Map<string, Set<number>>();
  for (const t of topics) {
    let set = out.get(t.topic);
    if (!set) out.set(t.topic, (set = new Set()));
    for (const p of t.partitions) set.add(p);
  }
  return out;
}
