/**
 * __transaction_state records, in Kafka's own format (coordinator-records/transaction-coordinator schemas,
 * TransactionLog.scala), so Kafka's tools read this log and the other way round.
 *
 * ```
 *   record key:    int16 0 │ TransactionLogKey { transactionalId }
 *   record value:  int16 1 │ TransactionLogValue v1 (flexible: previous/next producer id, client txn version
 *                             as tagged fields), what Kafka writes from transaction version 1; v0 is read
 *   null value:    tombstone, the transactional id expired (transactional.id.expiration.ms)
 * ```
 *
 * The fields written are those Kafka's TransactionLog.valueToBytes sets: the partitions grouped by topic (null
 * for Empty, which may have none; Complete* have none). A transaction of client transaction version 0 (its
 * clients end it with EndTxn v4 or below) writes neither the previous nor the next producer id, which Kafka keeps
 * in memory only for it, so its tagged section is empty; one of client version 2 (KIP-890 part 2) writes the
 * three tagged fields: previous and next producer id, and its client transaction version.
 */
import {
  createTransactionLogValue,
  decodeTransactionLogValue,
  encodeTransactionLogValue,
  TransactionLogValueVersions,
} from '../../../protocol/messages/data/transaction-coordinator/transaction-log-value.gen.js';
import { decodeTransactionLogKey, encodeTransactionLogKey } from '../../../protocol/messages/data/transaction-coordinator/transaction-log-key.gen.js';
import { Reader } from '../../../protocol/wire/reader.js';
import { Writer } from '../../../protocol/wire/writer.js';
import { CoordinatorCorruptError } from '../errors.js';
import type { EncodedRecord } from '../records.js';
import { NO_PRODUCER_EPOCH, supportsEpochBump, TxnState, type TxnValue } from './state.js';

export const TRANSACTION_LOG_KEY_VERSION = 0;
/** Kafka's TransactionVersion.transactionLogValueVersion for TV_1 and later (flexible records). */
export const TRANSACTION_LOG_VALUE_VERSION = 1;

export function encodeTxnKey(transactionalId: string): Buffer {
  const w = new Writer(32 + transactionalId.length);
  w.int16(TRANSACTION_LOG_KEY_VERSION);
  encodeTransactionLogKey(w, { transactionalId }, TRANSACTION_LOG_KEY_VERSION);
  return w.toBuffer();
}

export function encodeTxnRecord(transactionalId: string, v: TxnValue | null): EncodedRecord {
  const key = encodeTxnKey(transactionalId);
  if (v === null) return { key, value: null };
  const w = new Writer(128);
  w.int16(TRANSACTION_LOG_VALUE_VERSION);
  encodeTransactionLogValue(
    w,
    createTransactionLogValue({
      producerId: v.producerId,
      previousProducerId: supportsEpochBump(v.clientTransactionVersion) ? v.previousProducerId : -1n,
      nextProducerId: supportsEpochBump(v.clientTransactionVersion) ? v.nextProducerId : -1n,
      producerEpoch: v.producerEpoch,
      nextProducerEpoch: -1,
      transactionTimeoutMs: v.timeoutMs,
      transactionStatus: v.state,
      transactionPartitions: v.state === TxnState.Empty ? null : [...v.partitions].map(([topic, ps]) => ({ topic, partitionIds: [...ps].sort((a, b) => a - b) })),
      transactionLastUpdateTimestampMs: BigInt(v.lastUpdateTimestamp),
      transactionStartTimestampMs: BigInt(v.startTimestamp),
      clientTransactionVersion: v.clientTransactionVersion,
    }),
    TRANSACTION_LOG_VALUE_VERSION,
  );
  return { key, value: w.toBuffer() };
}

export interface DecodedTxnRecord {
  readonly transactionalId: string;
  /** null: tombstone. */
  readonly value: TxnValue | null;
}

/** Parses a stored record; null for a key that is not a TransactionLogKey (skipped, as Kafka skips unknown keys). */
export function decodeTxnRecord(key: Buffer, value: Buffer | null, context: { partition?: number; offset?: number } = {}): DecodedTxnRecord | null {
  if (key.length < 2) throw new CoordinatorCorruptError(`__transaction_state record key of ${key.length} bytes has no version`, context);
  if (key.readInt16BE(0) !== TRANSACTION_LOG_KEY_VERSION) return null;
  try {
    const kr = new Reader(key, 2);
    const { transactionalId } = decodeTransactionLogKey(kr, TRANSACTION_LOG_KEY_VERSION);
    kr.complete();
    if (value === null) return { transactionalId, value: null };
    if (value.length < 2) throw new CoordinatorCorruptError(`TransactionLogValue of ${value.length} bytes has no version`, context);
    const version = value.readInt16BE(0);
    if (version < TransactionLogValueVersions.min || version > TransactionLogValueVersions.max) {
      throw new CoordinatorCorruptError(`TransactionLogValue version ${version} is not one of ${TransactionLogValueVersions.min}-${TransactionLogValueVersions.max}`, context);
    }
    const vr = new Reader(value, 2);
    const v = decodeTransactionLogValue(vr, version);
    vr.check();
    if (v.transactionStatus < TxnState.Empty || v.transactionStatus > TxnState.PrepareEpochFence) {
      throw new CoordinatorCorruptError(`TransactionLogValue of ${transactionalId} has an unknown state ${v.transactionStatus}`, context);
    }
    const partitions = new Map<string, Set<number>>();
    // Kafka reads no partitions for Empty.
    for (const p of v.transactionStatus === TxnState.Empty ? [] : (v.transactionPartitions ?? [])) {
      let s = partitions.get(p.topic);
      if (!s) partitions.set(p.topic, (s = new Set()));
      for (const id of p.partitionIds) s.add(id);
    }
    return {
      transactionalId,
      value: {
        producerId: v.producerId,
        previousProducerId: v.previousProducerId,
        nextProducerId: v.nextProducerId,
        producerEpoch: v.producerEpoch,
        lastProducerEpoch: NO_PRODUCER_EPOCH,
        clientTransactionVersion: v.clientTransactionVersion,
        timeoutMs: v.transactionTimeoutMs,
        state: v.transactionStatus as TxnState,
        partitions,
        startTimestamp: Number(v.transactionStartTimestampMs),
        lastUpdateTimestamp: Number(v.transactionLastUpdateTimestampMs),
      },
    };
  } catch (e) {
    if (e instanceof CoordinatorCorruptError) throw e;
    throw new CoordinatorCorruptError(`cannot decode a __transaction_state record: ${(e as Error).message}`, context, e);
  }
}
