/**
 * The transaction coordinator: transactional ids and their transactions in __transaction_state (KIP-98). See README.md.
 */
export {
  TransactionCoordinator,
  type TransactionCoordinatorOptions,
  type DescribedTransaction,
  type InitProducerIdResult,
  type ListTransactionsFilters,
  type ListTransactionsResult,
  type PartitionError,
  type TopicPartitionRef,
} from './coordinator.js';
export { transactionCoordinatorConfig, TRANSACTION_COORDINATOR_CONFIG_DEFS, type TransactionCoordinatorConfig } from './config.js';
export { TxnState, txnStateName } from './state.js';
export type { TxnMarkerEntry, TxnMarkerResult, TxnMarkerSink } from './types.js';
