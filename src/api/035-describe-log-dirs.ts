// DescribeLogDirs v1-4 (v0 removed by Kafka 4) · v2+: flexible · v3: top-level errorCode · v4: total and
// usable bytes (KIP-827). Ledgerline keeps every partition in one data directory.
import { statfs } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  DescribeLogDirsApi,
  createDescribeLogDirsResponse,
  createDescribeLogDirsResponseDescribeLogDirsPartition,
  createDescribeLogDirsResponseDescribeLogDirsResult,
  createDescribeLogDirsResponseDescribeLogDirsTopic,
} from '../../protocol/messages/035-describe-log-dirs.gen.js';
import { defineHandler } from './handler.js';

export const describeLogDirs = defineHandler({
  api: DescribeLogDirsApi,
  uses: ['config', 'partitions'],
  versions: { min: 1, max: 4 },
  async handle(req, ctx) {
    const { config, partitions } = ctx.services;
    const wanted = req.topics === null ? null : new Map(req.topics.map((t) => [t.topic, new Set(t.partitions)]));
    const byTopic = new Map<string, ReturnType<typeof createDescribeLogDirsResponseDescribeLogDirsPartition>[]>();
    for (const part of partitions.all()) {
      const name = part.topic.name;
      if (wanted && !wanted.get(name)?.has(part.index)) continue;
      let list = byTopic.get(name);
      if (!list) byTopic.set(name, (list = []));
      list.push(createDescribeLogDirsResponseDescribeLogDirsPartition({ partitionIndex: part.index, partitionSize: BigInt(part.log.stats.sizeInBytes), offsetLag: 0n, isFutureKey: false }));
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
