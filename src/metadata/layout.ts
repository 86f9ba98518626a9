/**
 * The key layout of Ledgerline's metadata: every layer builds keys here so that prefixes nest without
 * leaking (`/partitions/a/` never matches `/partitions/ab/…`) and a restart can load a whole kind of thing
 * with one `list(prefix)`.
 *
 *   /cluster                                   cluster id, format version
 *   /topics/<topic>                            topic: id (KIP-516 UUID), partition count, configs
 *   /topic-ids/<topicId>                       topic id → name
 *   /partitions/<topic>/<partition>/state      partition head: leader epoch, owner epoch — the CAS token
 *                                              a rollover or takeover compares against
 *   /partitions/<topic>/<partition>/ledgers/<firstOffset, 19 digits>
 *                                              one key per ledger of the chain: ledger id, first offset,
 *                                              state (open/sealed/offloaded), last offset once sealed
 *   /ids/<name>                                id counters (next ledger id, …), see id-allocator.ts
 *   /brokers/ids/<brokerId>                    broker registration, put with the broker's lease
 *   /configs/brokers                           dynamic broker configs at the cluster level (Kafka's default
 *                                              broker resource, `kafka-configs --entity-default`)
 *   /configs/broker/<nodeId>                   one broker's own dynamic configs (`--entity-name <id>`)
 *   /nodes/<nodeId>                            a node's identity: its metadata directory id (KIP-858),
 *                                              created by the node's first start
 *   /owners/<topic>/<partition>                partition owner, put with the owning broker's lease
 *   /groups/<groupId>                          consumer group coordinator ownership, with a lease
 *   /quotas/<entity>                           client quotas of one entity (src/quota/quota-store.ts), e.g.
 *                                              /quotas/user=alice&client-id=<default>, /quotas/ip=10.0.0.1
 *
 * Segments built from names a client chooses (group ids, and topics for safety) are percent-encoded so a
 * '/' in them cannot add a level; Kafka topic names ([a-zA-Z0-9._-]) encode to themselves. Offsets are
 * zero-padded so that byte order is numeric order and a list returns the ledger chain in offset order.
 * An etcd-backed store adds its cluster namespace in front of these keys; code never does.
 */

import { MetadataInvalidArgumentError } from './errors.js';

export const CLUSTER_KEY = '/cluster';
export const TOPICS_PREFIX = '/topics/';
export const TOPIC_IDS_PREFIX = '/topic-ids/';
export const PARTITIONS_PREFIX = '/partitions/';
export const IDS_PREFIX = '/ids/';
export const BROKERS_PREFIX = '/brokers/';
/** The registrations of the live brokers of a shared cluster (src/cluster/member-registry.ts). */
export const BROKER_IDS_PREFIX = '/brokers/ids/';
export const NODES_PREFIX = '/nodes/';
export const CLUSTER_CONFIGS_KEY = '/configs/brokers';
/** A broker's own dynamic configs: /configs/broker/<nodeId>. */
export const BROKER_CONFIGS_PREFIX = '/configs/broker/';
export const OWNERS_PREFIX = '/owners/';
export const GROUPS_PREFIX = '/groups/';
/** Client quotas, one key per entity (src/quota/quota-store.ts). */
export const QUOTAS_PREFIX = '/quotas/';

/** Digits of the largest int64 offset (9223372036854775807). */
const OFFSET_DIGITS = 19;
const MAX_OFFSET = 0x7fffffffffffffffn;

/** One path segment: percent-encodes everything but [A-Za-z0-9-_.!~*'()], so '/' and '%' cannot nest. */
export function segment(name: string): string {
  if (typeof name !== 'string' || name.length === 0) {
    throw new MetadataInvalidArgumentError('a key segment must be a non-empty string', { name });
  }
  return encodeURIComponent(name);
}

/** The name a segment was built from. */
export function parseSegment(encoded: string): string {
  return decodeURIComponent(encoded);
}

function partitionSegment(partition: number): string {
  if (!Number.isInteger(partition) || partition < 0 || partition > 0x7fffffff) {
    throw new MetadataInvalidArgumentError('partition must be an int32 >= 0', { partition });
  }
  return String(partition);
}

/** A non-negative int64 offset as 19 digits, so that byte order is numeric order. */
export function offsetSegment(offset: bigint | number): string {
  const n = typeof offset === 'bigint' ? offset : BigInt(offset);
  if (n < 0n || n > MAX_OFFSET || (typeof offset === 'number' && !Number.isSafeInteger(offset))) {
    throw new MetadataInvalidArgumentError('offset must be a non-negative int64', { offset: String(offset) });
  }
  return n.toString().padStart(OFFSET_DIGITS, '0');
}

export function parseOffsetSegment(s: string): bigint {
  if (!/^[0-9]{19}$/.test(s)) throw new MetadataInvalidArgumentError('not an offset segment', { segment: s });
  return BigInt(s);
}

export function topicKey(topic: string): string {
  return TOPICS_PREFIX + segment(topic);
}

export function topicIdKey(topicId: string): string {
  return TOPIC_IDS_PREFIX + segment(topicId);
}

/** Everything of one topic's partitions: `list(topicPartitionsPrefix(t))` loads them all. */
export function topicPartitionsPrefix(topic: string): string {
  return `${PARTITIONS_PREFIX}${segment(topic)}/`;
}

export function partitionPrefix(topic: string, partition: number): string {
  return `${topicPartitionsPrefix(topic)}${partitionSegment(partition)}/`;
}

export function partitionStateKey(topic: string, partition: number): string {
  return `${partitionPrefix(topic, partition)}state`;
}

export function ledgersPrefix(topic: string, partition: number): string {
  return `${partitionPrefix(topic, partition)}ledgers/`;
}

export function ledgerKey(topic: string, partition: number, firstOffset: bigint | number): string {
  return ledgersPrefix(topic, partition) + offsetSegment(firstOffset);
}

export function idCounterKey(name: string): string {
  return IDS_PREFIX + segment(name);
}

/** A node's identity record (its directory id), kept across restarts. */
export function nodeKey(nodeId: number): string {
  if (!Number.isInteger(nodeId) || nodeId < 0 || nodeId > 0x7fffffff) throw new MetadataInvalidArgumentError('node id must be an int32 >= 0', { nodeId });
  return `${NODES_PREFIX}${nodeId}`;
}

export function brokerKey(brokerId: number): string {
  if (!Number.isInteger(brokerId) || brokerId < 0 || brokerId > 0x7fffffff) {
    throw new MetadataInvalidArgumentError('broker id must be an int32 >= 0', { brokerId });
  }
  return BROKER_IDS_PREFIX + String(brokerId);
}

export function partitionOwnerKey(topic: string, partition: number): string {
  return `${OWNERS_PREFIX}${segment(topic)}/${partitionSegment(partition)}`;
}

export function groupKey(groupId: string): string {
  return GROUPS_PREFIX + segment(groupId);
}

/** Where a key of the `/partitions/` tree belongs; null for keys outside it. */
export type PartitionKey =
  | { readonly kind: 'state'; readonly topic: string; readonly partition: number }
  | { readonly kind: 'ledger'; readonly topic: string; readonly partition: number; readonly firstOffset: bigint };

export function parsePartitionKey(key: string): PartitionKey | null {
  if (!key.startsWith(PARTITIONS_PREFIX)) return null;
  const parts = key.slice(PARTITIONS_PREFIX.length).split('/');
  if (parts.length < 3 || !/^(0|[1-9][0-9]{0,9})$/.test(parts[1]!)) return null;
  const topic = parseSegment(parts[0]!);
  const partition = Number(parts[1]);
  if (partition > 0x7fffffff) return null;
  if (parts.length === 3 && parts[2] === 'state') return { kind: 'state', topic, partition };
  if (parts.length === 4 && parts[2] === 'ledgers' && /^[0-9]{19}$/.test(parts[3]!)) {
    return { kind: 'ledger', topic, partition, firstOffset: BigInt(parts[3]!) };
  }
  return null;
}
