/**
 * The partition log (managed ledger): what the broker uses to serve a partition. See README.md here.
 *
 *   PartitionLog.open({ topic, partition, ledgers, metadata, config })   take ownership (fences the previous owner)
 *   PartitionLog.deletePartition({ topic, partition, ledgers, metadata }) topic deletion, whoever owns it
 */
export { PartitionLog } from './partition-log.js';
export * from './types.js';
export * from './errors.js';
export {
  DEFAULT_LOG_CONFIG,
  LOG_CONFIG_NAMES,
  logConfigFromKafkaConfigs,
  resolveLogConfig,
  type MessageTimestampType,
  type PartitionLogConfig,
} from './config.js';
export { findUnreferencedLedgers, type UnreferencedLedgerOptions } from './orphans.js';
