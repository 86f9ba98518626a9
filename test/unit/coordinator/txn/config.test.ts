/**
 * The transaction coordinator's configs: Kafka's names and defaults, in the broker's config table, and the
 * __transaction_state topic created with them.
 */
import { describe, expect, it } from 'vitest';
import { BROKER_CONFIG_BY_NAME } from '../../../../src/cluster/config-defs.js';
import { MemoryPartitionLog } from '../../../../src/coordinator/memory-log.js';
import { TransactionCoordinator } from '../../../../src/coordinator/txn/coordinator.js';
import { transactionCoordinatorConfig } from '../../../../src/coordinator/txn/config.js';

describe('transaction coordinator config', () => {
  it('has Kafka\'s names and defaults, defined in the broker\'s config table', () => {
    const defaults: Record<string, string> = {
      'transaction.state.log.num.partitions': '50',
      'transaction.state.log.replication.factor': '3',
      'transaction.state.log.min.isr': '2',
      'transaction.state.log.segment.bytes': '104857600',
      'transaction.max.timeout.ms': '900000',
      'transaction.abort.timed.out.transaction.cleanup.interval.ms': '10000',
      'transaction.remove.expired.transaction.cleanup.interval.ms': '3600000',
      'transactional.id.expiration.ms': '604800000',
    };
    for (const [name, value] of Object.entries(defaults)) expect(BROKER_CONFIG_BY_NAME.get(name)?.default, name).toBe(value);
    expect(transactionCoordinatorConfig(new Map())).toMatchObject({
      numPartitions: 50,
      replicationFactor: 3,
      minIsr: 2,
      maxTimeoutMs: 900_000,
      abortTimedOutIntervalMs: 10_000,
      removeExpiredIntervalMs: 3_600_000,
      transactionalIdExpirationMs: 604_800_000,
    });
    expect(transactionCoordinatorConfig(new Map([['transaction.max.timeout.ms', '1000']])).maxTimeoutMs).toBe(1000);
  });

  it('creates __transaction_state compacted and internal, its replication factor and min.insync.replicas capped to the live brokers', async () => {
    const created: Array<{ name: string; opts: { partitions: number; replicationFactor: number; configs: Record<string, string | null>; allowInternal?: boolean } }> = [];
    const topics = {
      get: () => undefined,
      getById: () => undefined,
      list: () => [],
      create: async (name: string, opts: (typeof created)[number]['opts']) => {
        created.push({ name, opts });
        return { name, topicId: 'x', partitions: opts.partitions, internal: true };
      },
    };
    const c = new TransactionCoordinator({
      config: transactionCoordinatorConfig(new Map([['transaction.state.log.num.partitions', '7']])),
      topics,
      openLog: async () => new MemoryPartitionLog(),
      producerIds: { allocate: async () => 1n },
      markers: { write: async () => [] },
      groupPartitionFor: () => 0,
      liveBrokers: () => 1,
    });
    await c.start();
    expect(c.numPartitions).toBe(7);
    expect(created).toEqual([
      {
        name: '__transaction_state',
        opts: {
          partitions: 7,
          replicationFactor: 1,
          allowInternal: true,
          configs: { 'cleanup.policy': 'compact', 'min.insync.replicas': '1', 'segment.bytes': '104857600', 'unclean.leader.election.enable': 'false', 'compression.type': 'uncompressed' },
        },
      },
    ]);
    await c.stop();
  });
});
