/**
 * The transaction coordinator's settings, under Kafka's names, read from the broker's config values.
 *
 * | config                                                      | default   | meaning                                   |
 * |-------------------------------------------------------------|-----------|-------------------------------------------|
 * | transaction.state.log.num.partitions                        | 50        | partitions of __transaction_state         |
 * | transaction.state.log.replication.factor                    | 3         | its replication factor; a cluster member  |
 * |                                                             |           | waits for that many live brokers, a       |
 * |                                                             |           | broker alone caps it                      |
 * | transaction.state.log.min.isr                               | 2         | its min.insync.replicas (capped)          |
 * | transaction.state.log.segment.bytes                         | 104857600 | its segment.bytes                         |
 * | transaction.max.timeout.ms                                  | 900000    | largest transaction.timeout.ms allowed    |
 * | transaction.abort.timed.out.transaction.cleanup.interval.ms | 10000     | how often timed-out transactions abort    |
 * | transaction.remove.expired.transaction.cleanup.interval.ms  | 3600000   | how often idle ids are removed            |
 * | transactional.id.expiration.ms                              | 604800000 | an id idle this long is removed           |
 */
import { ConfigError } from '../../config.js';
import { TRANSACTION_COORDINATOR_CONFIG_DEFS } from './config-defs.js';

export { TRANSACTION_COORDINATOR_CONFIG_DEFS };

export interface TransactionCoordinatorConfig {
  readonly numPartitions: number;
  readonly replicationFactor: number;
  readonly minIsr: number;
  readonly segmentBytes: number;
  readonly maxTimeoutMs: number;
  readonly abortTimedOutIntervalMs: number;
  readonly removeExpiredIntervalMs: number;
  readonly transactionalIdExpirationMs: number;
}

function defaultOf(name: string): string {
  const d = TRANSACTION_COORDINATOR_CONFIG_DEFS.find((c) => c.name === name);
  if (!d || d.default === null) throw new Error(`no default for ${name}`);
  return d.default;
}

export function transactionCoordinatorConfig(values: ReadonlyMap<string, string | null>, overrides: Partial<TransactionCoordinatorConfig> = {}): TransactionCoordinatorConfig {
  const int = (name: string, fallback?: string): number => {
    const raw = (values.get(name) ?? fallback ?? defaultOf(name)).trim();
    const n = Number(raw);
    if (!Number.isSafeInteger(n)) throw new ConfigError(`Invalid value ${raw} for configuration ${name}: Not a number of type INT`);
    return n;
  };
  return {
    numPartitions: int('transaction.state.log.num.partitions'),
    replicationFactor: int('transaction.state.log.replication.factor'),
    minIsr: int('transaction.state.log.min.isr'),
    segmentBytes: int('transaction.state.log.segment.bytes'),
    maxTimeoutMs: int('transaction.max.timeout.ms'),
    abortTimedOutIntervalMs: int('transaction.abort.timed.out.transaction.cleanup.interval.ms'),
    removeExpiredIntervalMs: int('transaction.remove.expired.transaction.cleanup.interval.ms'),
    transactionalIdExpirationMs: int('transactional.id.expiration.ms', '604800000'),
    ...overrides,
  };
}
