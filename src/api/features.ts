/**
 * KIP-584 feature versions, as ApiVersions v3+ reports them (supportedFeatures, finalizedFeatures and
 * finalizedFeaturesEpoch) and `kafka-features describe` prints them.
 *
 * Kafka 4.4.0 (kafka-server-common: MetadataVersion, Feature) supports metadata.version 7 (3.3-IV3, its
 * MINIMUM_VERSION) to 33 (4.4-IV2, LATEST_PRODUCTION), and a node formatted with the latest release has
 * metadata.version 33 finalized, with each other production feature at its default level for it:
 * kraft.version 1 (a `--standalone` quorum), transaction.version 2, group.version 1,
 * eligible.leader.replicas.version 1, share.version 2 and streams.version 1.
 *
 * Ledgerline reports the same names and metadata.version, and for the others the levels it implements:
 *   - kraft.version 0-1, finalized 1: it stands for a single standalone voter (DescribeQuorum);
 *   - group.version 0-1, finalized 1: the KIP-848 consumer group protocol is served (ConsumerGroupHeartbeat);
 *   - eligible.leader.replicas.version 0-1, finalized 1: a single replica is always eligible (ELR fields empty);
 *   - transaction.version 0-2, finalized 2, as Kafka: level 1 is the flexible __transaction_state records and
 *     KIP-890 part 1's verification, level 2 part 2, with which a Kafka 4.x producer sends no AddPartitionsToTxn
 *     or AddOffsetsToTxn (Produce v12+ and TxnOffsetCommit v5+ add the partition) and ends each transaction
 *     with EndTxn v5, whose epoch bump it goes on with (src/coordinator/txn/end-txn-v2.ts);
 *   - share.version and streams.version 0-0, not finalized: no share groups (KIP-932) or streams groups
 *     (KIP-1071) yet. A feature at level 0 is disabled and, as in Kafka's FeaturesImage, is not listed among
 *     the finalized features, so clients do not try to use it.
 */
import {
  createApiVersionsResponseFinalizedFeatureKey,
  createApiVersionsResponseSupportedFeatureKey,
  type ApiVersionsResponseFinalizedFeatureKey,
  type ApiVersionsResponseSupportedFeatureKey,
} from '../../protocol/messages/018-api-versions.gen.js';

interface FeatureLevels {
  readonly name: string;
  readonly min: number;
  readonly max: number;
  /** The finalized level; 0 is disabled and not reported as finalized. */
  readonly finalized: number;
}

/** Kafka 4.4-IV2's metadata.version feature level. */
export const METADATA_VERSION_LEVEL = 33;

export const FEATURES: readonly FeatureLevels[] = [
  { name: 'metadata.version', min: 7, max: METADATA_VERSION_LEVEL, finalized: METADATA_VERSION_LEVEL },
  { name: 'kraft.version', min: 0, max: 1, finalized: 1 },
  { name: 'transaction.version', min: 0, max: 2, finalized: 2 },
  { name: 'group.version', min: 0, max: 1, finalized: 1 },
  { name: 'eligible.leader.replicas.version', min: 0, max: 1, finalized: 1 },
  { name: 'share.version', min: 0, max: 0, finalized: 0 },
  { name: 'streams.version', min: 0, max: 0, finalized: 0 },
];

/**
 * The epoch of the finalized features (Kafka: the metadata offset they were read at). The levels above are
 * fixed for the node's lifetime, so one epoch stands for them; 0, since no feature was ever updated.
 */
export const FINALIZED_FEATURES_EPOCH = 0n;

/**
 * ApiVersions v3's supported features. Kafka 4 reports metadata.version's minimum as its own (7); before
 * v4 a client could not read a minimum of 0 (KAFKA-17011), so, as Kafka's ApiVersionsResponse does, v3
 * leaves out the features whose minimum is 0.
 */
export function supportedFeatures(version: number): ApiVersionsResponseSupportedFeatureKey[] {
  return FEATURES.filter((f) => version >= 4 || f.min > 0).map((f) => createApiVersionsResponseSupportedFeatureKey({ name: f.name, minVersion: f.min, maxVersion: f.max }));
}

export function finalizedFeatures(): ApiVersionsResponseFinalizedFeatureKey[] {
  return FEATURES.filter((f) => f.finalized > 0).map((f) => createApiVersionsResponseFinalizedFeatureKey({ name: f.name, minVersionLevel: f.finalized, maxVersionLevel: f.finalized }));
}
