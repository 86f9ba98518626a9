/**
 * Definitions of the group coordinator's configs that Kafka has and the broker's table (src/cluster/config-defs.ts)
 * may include: names, types, Kafka's defaults and bounds. Only a type is imported here, so the broker's table can
 * import this module without an import cycle.
 */
import type { ConfigDef } from '../cluster/config-defs.js';

const INT_MAX = '2147483647';

/** Definitions for the broker's config table (DescribeConfigs, validation of --set values). */
export const GROUP_COORDINATOR_CONFIG_DEFS: readonly ConfigDef[] = [
  { name: 'offset.metadata.max.bytes', type: 'INT', default: '4096', doc: 'Longest metadata string of an offset commit.', min: 0 },
  { name: 'offsets.topic.segment.bytes', type: 'INT', default: '104857600', doc: 'Ledger size of __consumer_offsets.', min: 1, readOnly: true },
  { name: 'group.coordinator.rebalance.protocols', type: 'LIST', default: 'classic,consumer', doc: 'Rebalance protocols served: classic, consumer (KIP-848).' },
  { name: 'group.consumer.session.timeout.ms', type: 'INT', default: '45000', doc: 'Session timeout of KIP-848 group members.', min: 1 },
  { name: 'group.consumer.min.session.timeout.ms', type: 'INT', default: '45000', doc: 'Smallest group.consumer.session.timeout.ms.', min: 1 },
  { name: 'group.consumer.max.session.timeout.ms', type: 'INT', default: '60000', doc: 'Largest group.consumer.session.timeout.ms.', min: 1 },
  { name: 'group.consumer.heartbeat.interval.ms', type: 'INT', default: '5000', doc: 'Heartbeat interval given to KIP-848 group members.', min: 1 },
  { name: 'group.consumer.min.heartbeat.interval.ms', type: 'INT', default: '5000', doc: 'Smallest group.consumer.heartbeat.interval.ms.', min: 1 },
  { name: 'group.consumer.max.heartbeat.interval.ms', type: 'INT', default: '15000', doc: 'Largest group.consumer.heartbeat.interval.ms.', min: 1 },
  { name: 'group.consumer.max.size', type: 'INT', default: INT_MAX, doc: 'Most members a KIP-848 group may have.', min: 1 },
  { name: 'group.consumer.assignors', type: 'LIST', default: 'uniform,range', doc: 'Server-side assignors of KIP-848 groups; the first is the default.' },
  {
    name: 'group.consumer.migration.policy',
    type: 'STRING',
    default: 'bidirectional',
    doc: 'Online conversion of non-empty groups between the protocols: bidirectional, upgrade (classic to consumer), downgrade (consumer to classic) or disabled.',
  },
];
