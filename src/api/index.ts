/**
 * Every API the broker serves: ApiVersions is computed from this list (each handler's version range).
 */
import type { Handler } from './handler.js';
import { produce } from './000-produce.js';
import { fetch } from './001-fetch.js';
import { listOffsets } from './002-list-offsets.js';
import { metadata } from './003-metadata.js';
import { offsetCommit } from './008-offset-commit.js';
import { offsetFetch } from './009-offset-fetch.js';
import { findCoordinator } from './010-find-coordinator.js';
import { joinGroup } from './011-join-group.js';
import { heartbeat } from './012-heartbeat.js';
import { leaveGroup } from './013-leave-group.js';
import { syncGroup } from './014-sync-group.js';
import { describeGroups } from './015-describe-groups.js';
import { listGroups } from './016-list-groups.js';
import { apiVersions } from './018-api-versions.js';
import { createTopics } from './019-create-topics.js';
import { deleteTopics } from './020-delete-topics.js';
import { deleteRecords } from './021-delete-records.js';
import { initProducerId } from './022-init-producer-id.js';
import { offsetForLeaderEpoch } from './023-offset-for-leader-epoch.js';
import { addPartitionsToTxn } from './024-add-partitions-to-txn.js';
import { addOffsetsToTxn } from './025-add-offsets-to-txn.js';
import { endTxn } from './026-end-txn.js';
import { writeTxnMarkers } from './027-write-txn-markers.js';
import { txnOffsetCommit } from './028-txn-offset-commit.js';
import { describeConfigs } from './032-describe-configs.js';
import { alterConfigs } from './033-alter-configs.js';
import { describeLogDirs } from './035-describe-log-dirs.js';
import { describeAcls } from './029-describe-acls.js';
import { createAcls } from './030-create-acls.js';
import { deleteAcls } from './031-delete-acls.js';
import { createPartitions } from './037-create-partitions.js';
import { electLeadersHandler } from './043-elect-leaders.js';
import { incrementalAlterConfigs } from './044-incremental-alter-configs.js';
import { alterPartitionReassignmentsHandler } from './045-alter-partition-reassignments.js';
import { listPartitionReassignmentsHandler } from './046-list-partition-reassignments.js';
import { describeQuorumHandler } from './055-describe-quorum.js';
import { deleteGroups } from './042-delete-groups.js';
import { offsetDelete } from './047-offset-delete.js';
import { describeClientQuotas } from './048-describe-client-quotas.js';
import { alterClientQuotas } from './049-alter-client-quotas.js';
import { saslHandshake } from './017-sasl-handshake.js';
import { saslAuthenticate } from './036-sasl-authenticate.js';
import { describeUserScramCredentials } from './050-describe-user-scram-credentials.js';
import { alterUserScramCredentials } from './051-alter-user-scram-credentials.js';
import { describeCluster } from './060-describe-cluster.js';
import { describeProducers } from './061-describe-producers.js';
import { describeTransactions } from './065-describe-transactions.js';
import { listTransactions } from './066-list-transactions.js';
import { consumerGroupHeartbeat } from './068-consumer-group-heartbeat.js';
import { consumerGroupDescribe } from './069-consumer-group-describe.js';
import { listConfigResourcesHandler } from './074-list-config-resources.js';
import { describeTopicPartitionsHandler } from './075-describe-topic-partitions.js';

export const handlers: readonly Handler[] = [
  produce,
  fetch,
  listOffsets,
  metadata,
  offsetCommit,
  offsetFetch,
  findCoordinator,
  joinGroup,
  heartbeat,
  leaveGroup,
  syncGroup,
  describeGroups,
  listGroups,
  saslHandshake,
  apiVersions,
  createTopics,
  deleteTopics,
  deleteRecords,
  initProducerId,
  offsetForLeaderEpoch,
  addPartitionsToTxn,
  addOffsetsToTxn,
  endTxn,
  writeTxnMarkers,
  txnOffsetCommit,
  describeAcls,
  createAcls,
  deleteAcls,
  describeConfigs,
  alterConfigs,
  describeLogDirs,
  saslAuthenticate,
  createPartitions,
  deleteGroups,
  electLeadersHandler,
  incrementalAlterConfigs,
  alterPartitionReassignmentsHandler,
  listPartitionReassignmentsHandler,
  offsetDelete,
  describeClientQuotas,
  alterClientQuotas,
  describeUserScramCredentials,
  alterUserScramCredentials,
  describeQuorumHandler,
  describeCluster,
  describeProducers,
  describeTransactions,
  listTransactions,
  consumerGroupHeartbeat,
  consumerGroupDescribe,
  listConfigResourcesHandler,
  describeTopicPartitionsHandler,
];
