/**
 * The group coordinator: classic consumer groups (JoinGroup/SyncGroup/Heartbeat/LeaveGroup), KIP-848 consumer
 * groups (ConsumerGroupHeartbeat), committed offsets, all stored in __consumer_offsets. See README.md.
 */
export { GroupCoordinator, type GroupCoordinatorOptions, type GroupSummary, type TopicCreator, type TopicEventSource } from './coordinator.js';
export { groupCoordinatorConfig, GROUP_COORDINATOR_CONFIG_DEFS, type GroupCoordinatorConfig } from './config.js';
export { registerGroupCoordinatorMetrics, type GroupMetricsOptions } from './metrics.js';
export { MemoryPartitionLog } from './memory-log.js';
export type { CoordinatorPartitionLog } from './storage.js';
export type { CoordinatorLogger, RequestInfo, TopicInfo, TopicView } from './context.js';
export { CoordinatorError, GroupApiError, CoordinatorStorageError, CoordinatorCorruptError } from './errors.js';
export { partitionForGroup } from './partitioner.js';
export type { TxnOffsetVerifier } from './txn-commits.js';
