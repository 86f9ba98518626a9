/**
 * The group coordinator's settings, under Kafka's names (GroupCoordinatorConfig). The classic-protocol and
 * offsets settings are in the broker's config table (src/cluster/config-defs.ts); the KIP-848 ones and the
 * few others below are defined here, with Kafka's defaults, and read from the broker's values when set.
 *
 * | config                                   | default        | meaning                                        |
 * |------------------------------------------|----------------|------------------------------------------------|
 * | offsets.topic.num.partitions             | 50             | partitions of __consumer_offsets               |
 * | offsets.topic.replication.factor         | 3              | its replication factor; a cluster member waits |
 * |                                          |                | for that many live brokers to create it, a     |
 * |                                          |                | broker alone caps it (internal-topic.ts)       |
 * | offsets.retention.minutes                | 10080 (7 days) | offsets of empty groups expire after this      |
 * | offsets.retention.check.interval.ms      | 600000         | how often expired offsets are removed          |
 * | offset.metadata.max.bytes                | 4096           | longest commit metadata (OFFSET_METADATA_TOO_LARGE) |
 * | offsets.topic.segment.bytes              | 104857600      | ledger size of __consumer_offsets              |
 * | group.initial.rebalance.delay.ms         | 3000           | wait for more members before a new classic     |
 * |                                          |                | group's first rebalance                        |
 * | group.min/max.session.timeout.ms         | 6000 / 1800000 | classic session timeouts allowed               |
 * | group.max.size                           | 2^31-1         | members of a classic group                     |
 * | group.coordinator.rebalance.protocols    | classic,consumer | protocols served (KIP-848: consumer)         |
 * | group.consumer.session.timeout.ms        | 45000          | KIP-848 member session timeout                 |
 * | group.consumer.min/max.session.timeout.ms| 45000 / 60000  | bounds of the above                            |
 * | group.consumer.heartbeat.interval.ms     | 5000           | KIP-848 heartbeat interval given to members    |
 * | group.consumer.min/max.heartbeat.interval.ms | 5000 / 15000 | bounds of the above                          |
 * | group.consumer.max.size                  | 2^31-1         | members of a KIP-848 group                     |
 * | group.consumer.assignors                 | uniform,range  | server assignors; the first is the default     |
 * | group.consumer.migration.policy          | bidirectional  | online conversion of non-empty groups between  |
 * |                                          |                | the protocols (KIP-848): upgrade, downgrade,   |
 * |                                          |                | bidirectional, disabled                        |
 */
import { ConfigError } from '../config.js';
import { GROUP_COORDINATOR_CONFIG_DEFS } from './config-defs.js';

export { GROUP_COORDINATOR_CONFIG_DEFS };

const INT_MAX = '2147483647';

export type RebalanceProtocol = 'classic' | 'consumer';

/** Kafka's ConsumerGroupMigrationPolicy. */
export type ConsumerGroupMigrationPolicy = 'bidirectional' | 'upgrade' | 'downgrade' | 'disabled';
const MIGRATION_POLICIES: readonly ConsumerGroupMigrationPolicy[] = ['bidirectional', 'upgrade', 'downgrade', 'disabled'];

export interface GroupCoordinatorConfig {
  readonly offsetsTopicNumPartitions: number;
  readonly offsetsTopicReplicationFactor: number;
  readonly offsetsTopicSegmentBytes: number;
  readonly offsetsRetentionMs: number;
  readonly offsetsRetentionCheckIntervalMs: number;
  readonly offsetMetadataMaxBytes: number;
  readonly classicGroupInitialRebalanceDelayMs: number;
  readonly classicGroupMinSessionTimeoutMs: number;
  readonly classicGroupMaxSessionTimeoutMs: number;
  readonly classicGroupMaxSize: number;
  /** Kafka's classicGroupNewMemberJoinTimeoutMs: a new member's parked JoinGroup is dropped after this. */
  readonly classicGroupNewMemberJoinTimeoutMs: number;
  readonly rebalanceProtocols: ReadonlySet<RebalanceProtocol>;
  readonly consumerGroupSessionTimeoutMs: number;
  readonly consumerGroupHeartbeatIntervalMs: number;
  readonly consumerGroupMaxSize: number;
  /** Assignor names, the default first. */
  readonly consumerGroupAssignors: readonly string[];
  readonly consumerGroupMigrationPolicy: ConsumerGroupMigrationPolicy;
}

/** Kafka's class names for its assignors, accepted as aliases of the short names. */
const ASSIGNOR_ALIASES: Readonly<Record<string, string>> = {
  'org.apache.kafka.coordinator.group.assignor.UniformAssignor': 'uniform',
  'org.apache.kafka.coordinator.group.assignor.RangeAssignor': 'range',
};

export const KNOWN_ASSIGNORS: readonly string[] = ['uniform', 'range'];

function defaultOf(name: string): string {
  const d = GROUP_COORDINATOR_CONFIG_DEFS.find((c) => c.name === name);
  if (!d || d.default === null) throw new Error(`no default for ${name}`);
  return d.default;
}

/**
 * Reads the coordinator's settings from the broker's config values (Kafka names). Values the broker table
 * does not define yet fall back to Kafka's defaults above. Throws ConfigError (LL_ERR_CONFIG) for a value Kafka
 * would reject at startup.
 */
export function groupCoordinatorConfig(values: ReadonlyMap<string, string | null>, overrides: Partial<GroupCoordinatorConfig> = {}): GroupCoordinatorConfig {
  const str = (name: string, fallback?: string): string => values.get(name) ?? fallback ?? defaultOf(name);
  const int = (name: string, fallback?: string): number => {
    const raw = str(name, fallback).trim();
    const n = Number(raw);
    if (!Number.isSafeInteger(n)) throw new ConfigError(`Invalid value ${raw} for configuration ${name}: Not a number of type INT`);
    return n;
  };
  const list = (name: string): string[] =>
    str(name)
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);

  const protocols = new Set<RebalanceProtocol>();
  for (const p of list('group.coordinator.rebalance.protocols')) {
    const lower = p.toLowerCase();
    if (lower !== 'classic' && lower !== 'consumer') {
      throw new ConfigError(`Invalid value ${p} for configuration group.coordinator.rebalance.protocols: String must be one of: classic, consumer`);
    }
    protocols.add(lower);
  }
  // Kafka: the classic protocol cannot be disabled.
  if (!protocols.has('classic')) throw new ConfigError('The list of rebalance protocols must include classic.');

  const assignors = list('group.consumer.assignors').map((a) => ASSIGNOR_ALIASES[a] ?? a);
  for (const a of assignors) {
    if (!KNOWN_ASSIGNORS.includes(a)) throw new ConfigError(`Invalid value ${a} for configuration group.consumer.assignors: unknown assignor (known: ${KNOWN_ASSIGNORS.join(', ')})`);
  }
  if (assignors.length === 0) throw new ConfigError('group.consumer.assignors must name at least one assignor');

  const minSession = int('group.consumer.min.session.timeout.ms');
  const maxSession = int('group.consumer.max.session.timeout.ms');
  const session = int('group.consumer.session.timeout.ms');
  const minHb = int('group.consumer.min.heartbeat.interval.ms');
  const maxHb = int('group.consumer.max.heartbeat.interval.ms');
  const hb = int('group.consumer.heartbeat.interval.ms');
  // Kafka's GroupCoordinatorConfig checks.
  if (session < minSession || session > maxSession) {
    throw new ConfigError(`group.consumer.session.timeout.ms must be between group.consumer.min.session.timeout.ms (${minSession}) and group.consumer.max.session.timeout.ms (${maxSession})`);
  }
  if (hb < minHb || hb > maxHb) {
    throw new ConfigError(`group.consumer.heartbeat.interval.ms must be between group.consumer.min.heartbeat.interval.ms (${minHb}) and group.consumer.max.heartbeat.interval.ms (${maxHb})`);
  }
  if (hb >= session) throw new ConfigError('group.consumer.heartbeat.interval.ms must be less than group.consumer.session.timeout.ms');

  const policy = str('group.consumer.migration.policy').trim().toLowerCase();
  if (!(MIGRATION_POLICIES as readonly string[]).includes(policy)) {
    throw new ConfigError(`Invalid value ${policy} for configuration group.consumer.migration.policy: String must be one of (case insensitive): ${MIGRATION_POLICIES.join(', ')}`);
  }

  const minClassic = int('group.min.session.timeout.ms', '6000');
  const maxClassic = int('group.max.session.timeout.ms', '1800000');

  return {
    offsetsTopicNumPartitions: int('offsets.topic.num.partitions', '50'),
    offsetsTopicReplicationFactor: int('offsets.topic.replication.factor', '3'),
    offsetsTopicSegmentBytes: int('offsets.topic.segment.bytes'),
    offsetsRetentionMs: int('offsets.retention.minutes', '10080') * 60_000,
    offsetsRetentionCheckIntervalMs: int('offsets.retention.check.interval.ms', '600000'),
    offsetMetadataMaxBytes: int('offset.metadata.max.bytes'),
    classicGroupInitialRebalanceDelayMs: int('group.initial.rebalance.delay.ms', '3000'),
    classicGroupMinSessionTimeoutMs: minClassic,
    classicGroupMaxSessionTimeoutMs: maxClassic,
    classicGroupMaxSize: int('group.max.size', INT_MAX),
    classicGroupNewMemberJoinTimeoutMs: 5 * 60 * 1000,
    rebalanceProtocols: protocols,
    consumerGroupSessionTimeoutMs: session,
    consumerGroupHeartbeatIntervalMs: hb,
    consumerGroupMaxSize: int('group.consumer.max.size'),
    consumerGroupAssignors: assignors,
    consumerGroupMigrationPolicy: policy as ConsumerGroupMigrationPolicy,
    ...overrides,
  };
}
