/**
 * Control records (KIP-98): the single record of a control batch (attribute bit 5), written by the broker,
 * never by clients. Transaction markers are the ones a broker writes:
 *
 *   key   = ControlRecordType  version int16 (0) | type int16 (0 ABORT, 1 COMMIT, 2.. KRaft types)
 *   value = EndTxnMarker       version int16 (0) | coordinatorEpoch int32
 *
 * A marker batch is transactional and control, carries the producer's id and epoch, no sequence (-1) and no
 * compression; consumers use it to drop aborted records (read_committed) and skip it in any case.
 * Parsing follows ControlRecordType.parseTypeId and EndTransactionMarker.deserializeValue.
 */
import { buildRecordBatchSync } from './builder.js';
import { InvalidRecordError } from './errors.js';

export const ControlRecordType = {
  ABORT: 0,
  COMMIT: 1,
  LEADER_CHANGE: 2,
  SNAPSHOT_HEADER: 3,
  SNAPSHOT_FOOTER: 4,
  KRAFT_VERSION: 5,
  KRAFT_VOTERS: 6,
} as const;

const CONTROL_KEY_VERSION = 0;
const CONTROL_KEY_SIZE = 4;
const END_TXN_MARKER_VERSION = 0;
const END_TXN_MARKER_SIZE = 6;

export function controlRecordKey(type: number): Buffer {
  const key = Buffer.allocUnsafe(CONTROL_KEY_SIZE);
  key.writeInt16BE(CONTROL_KEY_VERSION, 0);
  key.writeInt16BE(type, 2);
  return key;
}

/** The control type of a control record's key (unknown types are returned as they are; Kafka maps them to UNKNOWN). */
export function parseControlRecordType(key: Buffer | null): number {
  if (key === null || key.length < CONTROL_KEY_SIZE) {
    throw new InvalidRecordError(
      `Invalid value size found for end control record key. Must have at least ${CONTROL_KEY_SIZE} bytes, but found only ${key?.length ?? 0}`,
    );
  }
  const version = key.readInt16BE(0);
  if (version < 0) throw new InvalidRecordError(`Invalid version found for control record: ${version}. May indicate data corruption`);
  return key.readInt16BE(2);
}

export function endTxnMarkerValue(coordinatorEpoch: number): Buffer {
  const value = Buffer.allocUnsafe(END_TXN_MARKER_SIZE);
  value.writeInt16BE(END_TXN_MARKER_VERSION, 0);
  value.writeInt32BE(coordinatorEpoch, 2);
  return value;
}

export interface EndTxnMarker {
  commit: boolean;
  coordinatorEpoch: number;
}

/** Decodes a transaction marker from a control record's key and value. */
export function parseEndTxnMarker(key: Buffer | null, value: Buffer | null): EndTxnMarker {
  const type = parseControlRecordType(key);
  if (type !== ControlRecordType.ABORT && type !== ControlRecordType.COMMIT) {
    throw new InvalidRecordError(`Invalid control record type for end transaction marker ${type}`);
  }
  if (value === null || value.length < END_TXN_MARKER_SIZE) {
    throw new InvalidRecordError(`Invalid end transaction marker value of ${value?.length ?? 'null'} bytes`);
  }
  const version = value.readInt16BE(0);
  if (version < 0) {
    throw new InvalidRecordError(`Invalid version found for end transaction marker: ${version}. May indicate data corruption`);
  }
  // A newer version is read as version 0, whose fields it starts with (Kafka does the same).
  return { commit: type === ControlRecordType.COMMIT, coordinatorEpoch: value.readInt32BE(2) };
}

export interface EndTxnMarkerBatchOptions {
  commit: boolean;
  producerId: bigint | number;
  producerEpoch: number;
  coordinatorEpoch: number;
  /** Marker timestamp; default Date.now(). */
  timestamp?: number;
  baseOffset?: bigint | number;
  partitionLeaderEpoch?: number;
}

/** The control batch a WriteTxnMarkers request appends to a partition. */
export function buildEndTxnMarkerBatch(options: EndTxnMarkerBatchOptions): Buffer {
  const timestamp = options.timestamp ?? Date.now();
  return buildRecordBatchSync(
    [
      {
        key: controlRecordKey(options.commit ? ControlRecordType.COMMIT : ControlRecordType.ABORT),
        value: endTxnMarkerValue(options.coordinatorEpoch),
        timestamp,
      },
    ],
    {
      baseOffset: options.baseOffset ?? 0,
      partitionLeaderEpoch: options.partitionLeaderEpoch,
      producerId: options.producerId,
      producerEpoch: options.producerEpoch,
      baseSequence: -1,
      isTransactional: true,
      isControl: true,
      now: timestamp,
    },
  );
}
