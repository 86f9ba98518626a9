/**
 * Every API the broker serves: ApiVersions is computed from this list (each handler's version range).
 */
import type { Handler } from './handler.js';
import { produce } from './000-produce.js';
import { fetch } from './001-fetch.js';
import { listOffsets } from './002-list-offsets.js';
import { metadata } from './003-metadata.js';
import { apiVersions } from './018-api-versions.js';
import { createTopics } from './019-create-topics.js';
import { deleteTopics } from './020-delete-topics.js';
import { deleteRecords } from './021-delete-records.js';
import { initProducerId } from './022-init-producer-id.js';
import { offsetForLeaderEpoch } from './023-offset-for-leader-epoch.js';
import { describeConfigs } from './032-describe-configs.js';
import { alterConfigs } from './033-alter-configs.js';
import { describeLogDirs } from './035-describe-log-dirs.js';
import { createPartitions } from './037-create-partitions.js';
import { incrementalAlterConfigs } from './044-incremental-alter-configs.js';
import { describeCluster } from './060-describe-cluster.js';

export const handlers: readonly Handler[] = [
  produce,
  fetch,
  listOffsets,
  metadata,
  apiVersions,
  createTopics,
  deleteTopics,
  deleteRecords,
  initProducerId,
  offsetForLeaderEpoch,
  describeConfigs,
  alterConfigs,
  describeLogDirs,
  createPartitions,
  incrementalAlterConfigs,
  describeCluster,
];
