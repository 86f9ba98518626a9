/**
 * The group coordinator's records, in Kafka's own __consumer_offsets format (coordinator-records schemas),
 * so the log can be read by Kafka's tools and the other way round.
 *
 * ```
 *   record key:    int16 key version │ key struct (that version)      the key version names the record type
 *   record value:  int16 value version │ value struct                  null value = tombstone (key deleted)
 *
 *   key version  record                                     value versions written
 *   0, 1         OffsetCommitKey (group, topic, partition)  OffsetCommitValue v1 (with expireTimestamp) or v3
 *   2            GroupMetadataKey (group)                   GroupMetadataValue v3 (classic group)
 *   3            ConsumerGroupMetadataKey                   ConsumerGroupMetadataValue v0 (group epoch)
 *   4            ConsumerGroupPartitionMetadataKey          v0 (subscribed topics' partition counts)
 *   5            ConsumerGroupMemberMetadataKey             v0 (a KIP-848 member's subscription)
 *   6            ConsumerGroupTargetAssignmentMetadataKey   v0 (target assignment epoch)
 *   7            ConsumerGroupTargetAssignmentMemberKey     v0 (a member's target partitions)
 *   8            ConsumerGroupCurrentMemberAssignmentKey    v0 (a member's epoch, state, owned partitions)
 * ```
 *
 * Other key versions (share groups, 9-11, and later Kafka additions) are kept as opaque `Unknown` records:
 * replay ignores them and the log cleaner keeps the latest of each key like any other. Keys are compared as bytes,
 * so two records with the same key bytes replace each other, exactly as Kafka's log compaction treats them.
 */
import { ZERO_UUID } from '../../protocol/wire/uuid.js';
import { Reader } from '../../protocol/wire/reader.js';
import { Writer } from '../../protocol/wire/writer.js';
import {
  decodeConsumerGroupCurrentMemberAssignmentKey,
  encodeConsumerGroupCurrentMemberAssignmentKey,
  type ConsumerGroupCurrentMemberAssignmentKey,
} from '../../protocol/messages/data/group-coordinator/consumer-group-current-member-assignment-key.gen.js';
import {
  decodeConsumerGroupCurrentMemberAssignmentValue,
  encodeConsumerGroupCurrentMemberAssignmentValue,
  type ConsumerGroupCurrentMemberAssignmentValue,
} from '../../protocol/messages/data/group-coordinator/consumer-group-current-member-assignment-value.gen.js';
import {
  decodeConsumerGroupMemberMetadataKey,
  encodeConsumerGroupMemberMetadataKey,
  type ConsumerGroupMemberMetadataKey,
} from '../../protocol/messages/data/group-coordinator/consumer-group-member-metadata-key.gen.js';
import {
  decodeConsumerGroupMemberMetadataValue,
  encodeConsumerGroupMemberMetadataValue,
  type ConsumerGroupMemberMetadataValue,
} from '../../protocol/messages/data/group-coordinator/consumer-group-member-metadata-value.gen.js';
import {
  decodeConsumerGroupMetadataKey,
  encodeConsumerGroupMetadataKey,
  type ConsumerGroupMetadataKey,
} from '../../protocol/messages/data/group-coordinator/consumer-group-metadata-key.gen.js';
import {
  decodeConsumerGroupMetadataValue,
  encodeConsumerGroupMetadataValue,
  type ConsumerGroupMetadataValue,
} from '../../protocol/messages/data/group-coordinator/consumer-group-metadata-value.gen.js';
import {
  decodeConsumerGroupPartitionMetadataKey,
  encodeConsumerGroupPartitionMetadataKey,
  type ConsumerGroupPartitionMetadataKey,
} from '../../protocol/messages/data/group-coordinator/consumer-group-partition-metadata-key.gen.js';
import {
  decodeConsumerGroupPartitionMetadataValue,
  encodeConsumerGroupPartitionMetadataValue,
  type ConsumerGroupPartitionMetadataValue,
} from '../../protocol/messages/data/group-coordinator/consumer-group-partition-metadata-value.gen.js';
import {
  decodeConsumerGroupTargetAssignmentMemberKey,
  encodeConsumerGroupTargetAssignmentMemberKey,
  type ConsumerGroupTargetAssignmentMemberKey,
} from '../../protocol/messages/data/group-coordinator/consumer-group-target-assignment-member-key.gen.js';
import {
  decodeConsumerGroupTargetAssignmentMemberValue,
  encodeConsumerGroupTargetAssignmentMemberValue,
  type ConsumerGroupTargetAssignmentMemberValue,
} from '../../protocol/messages/data/group-coordinator/consumer-group-target-assignment-member-value.gen.js';
import {
  decodeConsumerGroupTargetAssignmentMetadataKey,
  encodeConsumerGroupTargetAssignmentMetadataKey,
  type ConsumerGroupTargetAssignmentMetadataKey,
} from '../../protocol/messages/data/group-coordinator/consumer-group-target-assignment-metadata-key.gen.js';
import {
  decodeConsumerGroupTargetAssignmentMetadataValue,
  encodeConsumerGroupTargetAssignmentMetadataValue,
  type ConsumerGroupTargetAssignmentMetadataValue,
} from '../../protocol/messages/data/group-coordinator/consumer-group-target-assignment-metadata-value.gen.js';
import { decodeGroupMetadataKey, encodeGroupMetadataKey, type GroupMetadataKey } from '../../protocol/messages/data/group-coordinator/group-metadata-key.gen.js';
import {
  decodeGroupMetadataValue,
  encodeGroupMetadataValue,
  type GroupMetadataValue,
} from '../../protocol/messages/data/group-coordinator/group-metadata-value.gen.js';
import { decodeOffsetCommitKey, encodeOffsetCommitKey, type OffsetCommitKey } from '../../protocol/messages/data/group-coordinator/offset-commit-key.gen.js';
import {
  decodeOffsetCommitValue,
  encodeOffsetCommitValue,
  type OffsetCommitValue,
} from '../../protocol/messages/data/group-coordinator/offset-commit-value.gen.js';
import { CoordinatorCorruptError } from './errors.js';

/** Kafka's key versions, which name the record types. */
export const RecordKeyVersion = {
  OffsetCommitV0: 0,
  OffsetCommit: 1,
  GroupMetadata: 2,
  ConsumerGroupMetadata: 3,
  ConsumerGroupPartitionMetadata: 4,
  ConsumerGroupMemberMetadata: 5,
  ConsumerGroupTargetAssignmentMetadata: 6,
  ConsumerGroupTargetAssignmentMember: 7,
  ConsumerGroupCurrentMemberAssignment: 8,
} as const;

/** Value versions this broker writes (Kafka's, for metadata version 3.x: GroupMetadataValue v3, OffsetCommitValue v3). */
export const GROUP_METADATA_VALUE_VERSION = 3;
export const OFFSET_COMMIT_VALUE_VERSION = 3;
/** OffsetCommitValue v4 (flexible) carries the committed topic's id in a tagged field, as Kafka 4.x writes it. */
export const OFFSET_COMMIT_VALUE_VERSION_WITH_TOPIC_ID = 4;
/** OffsetCommitValue v1 is the only version with an explicit expireTimestamp (OffsetCommit v2-4 retention). */
export const OFFSET_COMMIT_VALUE_VERSION_WITH_EXPIRY = 1;

export type CoordinatorRecord =
  | { readonly type: 'OffsetCommit'; readonly key: OffsetCommitKey; readonly value: OffsetCommitValue | null }
  | { readonly type: 'GroupMetadata'; readonly key: GroupMetadataKey; readonly value: GroupMetadataValue | null }
  | { readonly type: 'ConsumerGroupMetadata'; readonly key: ConsumerGroupMetadataKey; readonly value: ConsumerGroupMetadataValue | null }
  | {
      readonly type: 'ConsumerGroupPartitionMetadata';
      readonly key: ConsumerGroupPartitionMetadataKey;
      readonly value: ConsumerGroupPartitionMetadataValue | null;
    }
  | { readonly type: 'ConsumerGroupMemberMetadata'; readonly key: ConsumerGroupMemberMetadataKey; readonly value: ConsumerGroupMemberMetadataValue | null }
  | {
      readonly type: 'ConsumerGroupTargetAssignmentMetadata';
      readonly key: ConsumerGroupTargetAssignmentMetadataKey;
      readonly value: ConsumerGroupTargetAssignmentMetadataValue | null;
    }
  | {
      readonly type: 'ConsumerGroupTargetAssignmentMember';
      readonly key: ConsumerGroupTargetAssignmentMemberKey;
      readonly value: ConsumerGroupTargetAssignmentMemberValue | null;
    }
  | {
      readonly type: 'ConsumerGroupCurrentMemberAssignment';
      readonly key: ConsumerGroupCurrentMemberAssignmentKey;
      readonly value: ConsumerGroupCurrentMemberAssignmentValue | null;
    }
  | { readonly type: 'Unknown'; readonly keyVersion: number; readonly keyBytes: Buffer; readonly valueBytes: Buffer | null };

export type RecordType = CoordinatorRecord['type'];

/** A record as stored: key and value bytes (null value: tombstone). */
export interface EncodedRecord {
  readonly key: Buffer;
  readonly value: Buffer | null;
}

interface Codec {
  readonly type: Exclude<RecordType, 'Unknown'>;
  readonly keyVersion: number;
  encodeKey(w: Writer, key: any): void;
  decodeKey(r: Reader): any;
  encodeValue(w: Writer, value: any, version: number): void;
  decodeValue(r: Reader, version: number): any;
  /** The value version written for a value. */
  valueVersion(value: any): number;
  readonly valueVersions: { min: number; max: number };
}

function codec<K, V>(
  type: Exclude<RecordType, 'Unknown'>,
  keyVersion: number,
  encodeKey: (w: Writer, k: K, v: number) => void,
  decodeKey: (r: Reader, v: number) => K,
  encodeValue: (w: Writer, m: V, v: number) => void,
  decodeValue: (r: Reader, v: number) => V,
  valueVersions: { min: number; max: number },
  valueVersion: (value: V) => number,
): Codec {
  return {
    type,
    keyVersion,
    encodeKey: (w, k) => encodeKey(w, k, keyVersion),
    decodeKey: (r) => decodeKey(r, keyVersion),
    encodeValue,
    decodeValue,
    valueVersion,
    valueVersions,
  };
}

const OFFSET_COMMIT_CODEC = (keyVersion: number): Codec =>
  codec<OffsetCommitKey, OffsetCommitValue>(
    'OffsetCommit',
    keyVersion,
    encodeOffsetCommitKey,
    decodeOffsetCommitKey,
    encodeOffsetCommitValue,
    decodeOffsetCommitValue,
    { min: 0, max: 4 },
    (v) => (v.expireTimestamp >= 0n ? OFFSET_COMMIT_VALUE_VERSION_WITH_EXPIRY : v.topicId !== ZERO_UUID ? OFFSET_COMMIT_VALUE_VERSION_WITH_TOPIC_ID : OFFSET_COMMIT_VALUE_VERSION),
  );

const CODECS: ReadonlyMap<number, Codec> = new Map<number, Codec>([
  [0, OFFSET_COMMIT_CODEC(0)],
  [1, OFFSET_COMMIT_CODEC(1)],
  [2, codec('GroupMetadata', 2, encodeGroupMetadataKey, decodeGroupMetadataKey, encodeGroupMetadataValue, decodeGroupMetadataValue, { min: 0, max: 4 }, () => GROUP_METADATA_VALUE_VERSION)],
  [3, codec('ConsumerGroupMetadata', 3, encodeConsumerGroupMetadataKey, decodeConsumerGroupMetadataKey, encodeConsumerGroupMetadataValue, decodeConsumerGroupMetadataValue, { min: 0, max: 0 }, () => 0)],
  [
    4,
    codec(
      'ConsumerGroupPartitionMetadata',
      4,
      encodeConsumerGroupPartitionMetadataKey,
      decodeConsumerGroupPartitionMetadataKey,
      encodeConsumerGroupPartitionMetadataValue,
      decodeConsumerGroupPartitionMetadataValue,
      { min: 0, max: 0 },
      () => 0,
    ),
  ],
  [
    5,
    codec(
      'ConsumerGroupMemberMetadata',
      5,
      encodeConsumerGroupMemberMetadataKey,
      decodeConsumerGroupMemberMetadataKey,
      encodeConsumerGroupMemberMetadataValue,
      decodeConsumerGroupMemberMetadataValue,
      { min: 0, max: 0 },
      () => 0,
    ),
  ],
  [
    6,
    codec(
      'ConsumerGroupTargetAssignmentMetadata',
      6,
      encodeConsumerGroupTargetAssignmentMetadataKey,
      decodeConsumerGroupTargetAssignmentMetadataKey,
      encodeConsumerGroupTargetAssignmentMetadataValue,
      decodeConsumerGroupTargetAssignmentMetadataValue,
      { min: 0, max: 0 },
      () => 0,
    ),
  ],
  [
    7,
    codec(
      'ConsumerGroupTargetAssignmentMember',
      7,
      encodeConsumerGroupTargetAssignmentMemberKey,
      decodeConsumerGroupTargetAssignmentMemberKey,
      encodeConsumerGroupTargetAssignmentMemberValue,
      decodeConsumerGroupTargetAssignmentMemberValue,
      { min: 0, max: 0 },
      () => 0,
    ),
  ],
  [
    8,
    codec(
      'ConsumerGroupCurrentMemberAssignment',
      8,
      encodeConsumerGroupCurrentMemberAssignmentKey,
      decodeConsumerGroupCurrentMemberAssignmentKey,
      encodeConsumerGroupCurrentMemberAssignmentValue,
      decodeConsumerGroupCurrentMemberAssignmentValue,
      { min: 0, max: 0 },
      () => 0,
    ),
  ],
]);

const CODEC_BY_TYPE = new Map<RecordType, Codec>([...CODECS.values()].filter((c) => c.keyVersion !== 0).map((c) => [c.type, c]));

/** Serializes a record to its key and value bytes. OffsetCommit keys are written with key version 1, as Kafka does. */
export function encodeRecord(record: CoordinatorRecord): EncodedRecord {
  if (record.type === 'Unknown') return { key: record.keyBytes, value: record.valueBytes };
  const c = CODEC_BY_TYPE.get(record.type)!;
  const kw = new Writer(64);
  kw.int16(c.keyVersion);
  c.encodeKey(kw, record.key);
  if (record.value === null) return { key: kw.toBuffer(), value: null };
  const vw = new Writer(128);
  const version = c.valueVersion(record.value);
  vw.int16(version);
  c.encodeValue(vw, record.value, version);
  return { key: kw.toBuffer(), value: vw.toBuffer() };
}

/** Parses stored key and value bytes. Throws CoordinatorCorruptError for bytes that do not decode. */
export function decodeRecord(key: Buffer, value: Buffer | null, context: { partition?: number; offset?: number } = {}): CoordinatorRecord {
  if (key.length < 2) throw new CoordinatorCorruptError(`coordinator record key of ${key.length} bytes has no version`, context);
  const keyVersion = key.readInt16BE(0);
  const c = CODECS.get(keyVersion);
  if (!c) return { type: 'Unknown', keyVersion, keyBytes: key, valueBytes: value };
  try {
    const kr = new Reader(key, 2);
    const k = c.decodeKey(kr);
    kr.complete();
    if (value === null) return { type: c.type, key: k, value: null } as CoordinatorRecord;
    if (value.length < 2) throw new CoordinatorCorruptError(`${c.type} value of ${value.length} bytes has no version`, context);
    const valueVersion = value.readInt16BE(0);
    if (valueVersion < c.valueVersions.min || valueVersion > c.valueVersions.max) {
      throw new CoordinatorCorruptError(`${c.type} value version ${valueVersion} is not one of ${c.valueVersions.min}-${c.valueVersions.max}`, context);
    }
    const vr = new Reader(value, 2);
    const v = c.decodeValue(vr, valueVersion);
    // Kafka reads values leniently: a newer minor version may append fields it ignores.
    vr.check();
    return { type: c.type, key: k, value: v } as CoordinatorRecord;
  } catch (e) {
    if (e instanceof CoordinatorCorruptError) throw e;
    throw new CoordinatorCorruptError(`cannot decode a ${c.type} record: ${(e as Error).message}`, context, e);
  }
}
