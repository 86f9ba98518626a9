/**
 * Definitions of the transaction coordinator's configs (Kafka's TransactionStateManagerConfig and
 * TransactionLogConfig) for the broker's table (src/cluster/config-defs.ts): names, types, Kafka's defaults and
 * bounds. `transactional.id.expiration.ms` is already in the broker's table. Nothing is imported here (the shape is
 * that of src/cluster/config-defs.ts's ConfigDef, checked where the table spreads these), so the broker's table
 * imports this module without an import cycle.
 */

/** A definition, as src/cluster/config-defs.ts's ConfigDef has it. */
interface TxnConfigDef {
  readonly name: string;
  readonly type: 'INT' | 'SHORT';
  readonly default: string;
  readonly doc: string;
  readonly min?: number;
  readonly readOnly?: boolean;
}

export const TRANSACTION_COORDINATOR_CONFIG_DEFS: readonly TxnConfigDef[] = [
  { name: 'transaction.state.log.num.partitions', type: 'INT', default: '50', doc: 'Partitions of __transaction_state.', min: 1, readOnly: true },
  { name: 'transaction.state.log.replication.factor', type: 'SHORT', default: '3', doc: 'Replication factor of __transaction_state (capped to the live brokers when it is created).', min: 1, readOnly: true },
  { name: 'transaction.state.log.min.isr', type: 'INT', default: '2', doc: 'min.insync.replicas of __transaction_state (capped to its replication factor).', min: 1, readOnly: true },
  { name: 'transaction.state.log.segment.bytes', type: 'INT', default: '104857600', doc: 'Ledger size of __transaction_state.', min: 1, readOnly: true },
  { name: 'transaction.max.timeout.ms', type: 'INT', default: '900000', doc: 'Largest transaction timeout a producer may ask for (INVALID_TRANSACTION_TIMEOUT beyond).', min: 1, readOnly: true },
  {
    name: 'transaction.abort.timed.out.transaction.cleanup.interval.ms',
    type: 'INT',
    default: '10000',
    doc: 'How often transactions past their timeout are aborted.',
    min: 1,
    readOnly: true,
  },
  {
    name: 'transaction.remove.expired.transaction.cleanup.interval.ms',
    type: 'INT',
    default: '3600000',
    doc: 'How often transactional ids idle past transactional.id.expiration.ms are removed.',
    min: 1,
    readOnly: true,
  },
];
