/**
 * A broker on the ZooKeeper metadata store (ledgerline.metadata.store=zookeeper): it serves produce and fetch,
 * keeps nothing of its metadata in log.dirs, and a broker started later on another data directory finds the
 * topics in ZooKeeper. One real ZooKeeper from the development-cluster launcher; skipped without it.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bookKeeperClasspath, requireBookKeeper, startZooKeeper, type ZooKeeperProcess } from '../../compat/cluster/index.js';
import { buildRecordBatch } from '../../protocol/records/index.js';
import { KafkaClient } from '../../src/client/index.js';
import { BrokerProcess } from '../support/broker-process.js';
import { readPartition } from '../support/records.js';

const available = bookKeeperClasspath() !== undefined || requireBookKeeper();

describe.skipIf(!available)('a broker on the ZooKeeper metadata store', () => {
  let zk: ZooKeeperProcess;
  beforeAll(async () => {
    zk = await startZooKeeper();
  });
  afterAll(async () => {
    await zk?.stop();
  });

  it('keeps topics in ZooKeeper, where a broker on another data directory finds them', async () => {
    const configs = {
      'ledgerline.metadata.store': 'zookeeper',
      'ledgerline.metadata.zookeeper.connect': `${zk.connectString}/ledgerline-it`,
      'ledgerline.metadata.zookeeper.session.timeout.ms': '6000',
    };
    const first = await BrokerProcess.start({ configs });
    try {
      const client = await KafkaClient.connect({ bootstrap: first.bootstrap });
      try {
        const [created] = await client.createTopics([{ name: 'zk-orders', numPartitions: 3 }]);
        expect(created!.errorCode).toBe(0);
        const [r] = await client.produce([{ topic: 'zk-orders', partition: 1, records: await buildRecordBatch([{ value: 'a' }, { value: 'b' }]) }]);
        expect(r!.errorCode).toBe(0);
        expect((await readPartition(client, 'zk-orders', 1)).map((x) => x.value!.toString())).toEqual(['a', 'b']);
      } finally {
        await client.close();
      }
      const metadataDir = join(first.dataDir, 'metadata');
      expect(existsSync(metadataDir) ? readdirSync(metadataDir) : []).toEqual([]);
    } finally {
      await first.stop();
    }

    const second = await BrokerProcess.start({ configs });
    try {
      const client = await KafkaClient.connect({ bootstrap: second.bootstrap });
      try {
        await client.cluster.refreshMetadata(['zk-orders'], { allowAutoTopicCreation: false });
        expect(client.cluster.topics.get('zk-orders')?.partitions).toHaveLength(3);
      } finally {
        await client.close();
      }
    } finally {
      await second.stop();
    }
  }, 90_000);
});
