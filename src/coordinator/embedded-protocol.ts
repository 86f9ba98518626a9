/**
 * The consumer's embedded protocol as classic members carry it (Kafka's ConsumerProtocol): JoinGroup protocol
 * metadata is a ConsumerProtocolSubscription and SyncGroup assignments are ConsumerProtocolAssignments, each
 * prefixed by an int16 version:
 *
 * ```
 *   int16 version | ConsumerProtocolSubscription / ConsumerProtocolAssignment at min(version, highest known)
 * ```
 *
 * A version above the highest known one is read as the highest (later versions only append fields), as Kafka
 * reads them. The coordinator needs these when members of the two protocols share a group: to turn a classic
 * group into a KIP-848 group, to serve classic members in one, and to turn it back.
 */
import {
  ConsumerProtocolAssignmentVersions,
  createConsumerProtocolAssignment,
  createConsumerProtocolAssignmentTopicPartition,
  decodeConsumerProtocolAssignment,
  encodeConsumerProtocolAssignment,
} from '../../protocol/messages/data/consumer-protocol-assignment.gen.js';
import { ConsumerProtocolSubscriptionVersions, decodeConsumerProtocolSubscription } from '../../protocol/messages/data/consumer-protocol-subscription.gen.js';
import { Reader } from '../../protocol/wire/reader.js';
import { Writer } from '../../protocol/wire/writer.js';
import { EmbeddedProtocolError } from './errors.js';

export interface TopicPartitions {
  readonly topic: string;
  readonly partitions: readonly number[];
}

export interface EmbeddedSubscription {
  /** The version the member wrote; its assignments are written in the same one. */
  readonly version: number;
  readonly topics: readonly string[];
  /** v1+: what the member owns (cooperative rebalancing); empty before. */
  readonly ownedPartitions: readonly TopicPartitions[];
  /** v3+. */
  readonly rackId: string | null;
}

export { EmbeddedProtocolError };

function readVersion(bytes: Buffer, what: string): number {
  if (bytes.length < 2) throw new EmbeddedProtocolError(`${what}: ${bytes.length} bytes, no version`);
  const version = bytes.readInt16BE(0);
  if (version < 0) throw new EmbeddedProtocolError(`${what}: version ${version}`);
  return version;
}

export function parseSubscription(metadata: Buffer): EmbeddedSubscription {
  const version = readVersion(metadata, 'ConsumerProtocolSubscription');
  const r = new Reader(metadata, 2);
  const s = decodeConsumerProtocolSubscription(r, Math.min(version, ConsumerProtocolSubscriptionVersions.max));
  if (!r.ok) throw new EmbeddedProtocolError(`ConsumerProtocolSubscription v${version} does not parse`);
  return { version, topics: s.topics, ownedPartitions: s.ownedPartitions, rackId: s.rackId };
}

/** An assignment as a classic member was given it; an empty byte string (none yet) is no partition. */
export function parseAssignment(bytes: Buffer): TopicPartitions[] {
  if (bytes.length === 0) return [];
  const version = readVersion(bytes, 'ConsumerProtocolAssignment');
  const r = new Reader(bytes, 2);
  const a = decodeConsumerProtocolAssignment(r, Math.min(version, ConsumerProtocolAssignmentVersions.max));
  if (!r.ok) throw new EmbeddedProtocolError(`ConsumerProtocolAssignment v${version} does not parse`);
  return a.assignedPartitions;
}

/** A ConsumerProtocolAssignment in the version of the member's subscription (Kafka's serializeAssignment). */
export function serializeAssignment(partitions: readonly TopicPartitions[], subscriptionVersion: number): Buffer {
  const version = Math.min(Math.max(subscriptionVersion, ConsumerProtocolAssignmentVersions.min), ConsumerProtocolAssignmentVersions.max);
  const w = new Writer();
  w.int16(version);
  encodeConsumerProtocolAssignment(
    w,
    createConsumerProtocolAssignment({
      assignedPartitions: partitions.map((tp) => createConsumerProtocolAssignmentTopicPartition({ topic: tp.topic, partitions: [...tp.partitions] })),
    }),
    version,
  );
  return w.toBuffer();
}
