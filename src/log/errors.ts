/**
 * Errors raised by the partition log. Each class is a LedgerlineError (protocol/errors.ts): a stable `code`
 * to branch on, the Kafka error code the API layer answers with (`kafkaErrorCode`), a `cause` when a lower layer failed, and the partition and
 * offsets it concerns.
 *
 * | code                            | Kafka error                       | when                                   |
 * |---------------------------------|-----------------------------------|----------------------------------------|
 * | LL_ERR_LOG_OFFSET_OUT_OF_RANGE  | OFFSET_OUT_OF_RANGE (1)           | read below log start / above log end;  |
 * |                                 |                                   | DeleteRecords beyond the high watermark |
 * | LL_ERR_LOG_FENCED               | NOT_LEADER_OR_FOLLOWER (6)        | another owner took the partition over  |
 * | LL_ERR_LOG_CLOSED               | NOT_LEADER_OR_FOLLOWER (6)        | the log was closed (ownership released)|
 * | LL_ERR_LOG_DELETED              | UNKNOWN_TOPIC_OR_PARTITION (3)    | the partition was deleted              |
 * | LL_ERR_LOG_INVALID_OFFSET       | INVALID_RECORD (87)               | append-at-offset below the log end, or |
 * |                                 |                                   | not after the end the appender expected|
 * | LL_ERR_LOG_INVALID_ARGUMENT     | INVALID_REQUEST (42)              | a malformed argument                   |
 * | LL_ERR_LOG_STORAGE              | KAFKA_STORAGE_ERROR (56)          | the ledger or metadata store failed    |
 * | LL_ERR_LOG_CORRUPT              | KAFKA_STORAGE_ERROR (56)          | stored chain metadata cannot be decoded|
 * | LL_ERR_LOG_TXN_MARKER           | INVALID_PRODUCER_EPOCH (47),      | a transaction marker of an older       |
 * |                                 | TRANSACTION_COORDINATOR_FENCED (52) | producer or coordinator epoch        |
 *
 * A batch that is not a record batch v2 is reported with protocol/records' CorruptRecordError (CORRUPT_MESSAGE)
 * and an entry over the store's limit with the ledger store's EntryTooLargeError (MESSAGE_TOO_LARGE), as is.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import { LedgerlineError } from '../../protocol/errors.js';

export type LogErrorCode =
  | 'LL_ERR_LOG_OFFSET_OUT_OF_RANGE'
  | 'LL_ERR_LOG_FENCED'
  | 'LL_ERR_LOG_CLOSED'
  | 'LL_ERR_LOG_DELETED'
  | 'LL_ERR_LOG_INVALID_OFFSET'
  | 'LL_ERR_LOG_INVALID_ARGUMENT'
  | 'LL_ERR_LOG_STORAGE'
  | 'LL_ERR_LOG_CORRUPT'
  | 'LL_ERR_LOG_TXN_MARKER';

export interface LogErrorContext {
  /** `topic-partition`, as Kafka names a partition in its logs. */
  readonly partition?: string;
  readonly offset?: number;
  readonly logStartOffset?: number;
  readonly logEndOffset?: number;
  readonly highWatermark?: number;
  readonly ledgerId?: number;
  readonly key?: string;
}

export class LogError extends LedgerlineError {
  declare readonly code: LogErrorCode;
  readonly context: LogErrorContext;
  constructor(
    code: LogErrorCode,
    kafkaErrorCode: number,
    message: string,
    context: LogErrorContext = {},
    options?: { cause?: unknown },
  ) {
    super(code, kafkaErrorCode, message, options);
    this.context = context;
  }
}

/**
 * Kafka's OffsetOutOfRangeException: a fetch offset below the log start offset or above the log end offset,
 * or a DeleteRecords offset above the high watermark.
 */
export class OffsetOutOfRangeError extends LogError {
  constructor(message: string, context: LogErrorContext) {
    super('LL_ERR_LOG_OFFSET_OUT_OF_RANGE', ErrorCode.OFFSET_OUT_OF_RANGE, message, context);
  }
}

/**
 * Another owner took the partition over: it fenced this owner's open ledger or changed the chain under it.
 * Every later call fails with this error; the broker answers NOT_LEADER_OR_FOLLOWER so that clients refresh
 * their metadata and go to the new owner.
 */
export class LogFencedError extends LogError {
  constructor(partition: string, reason: string, cause?: unknown) {
    super(
      'LL_ERR_LOG_FENCED',
      ErrorCode.NOT_LEADER_OR_FOLLOWER,
      `partition ${partition} is owned elsewhere now: ${reason}`,
      { partition },
      { cause },
    );
  }
}

/** The log was closed here (ownership released); the partition may be open elsewhere. */
export class LogClosedError extends LogError {
  constructor(partition: string) {
    super('LL_ERR_LOG_CLOSED', ErrorCode.NOT_LEADER_OR_FOLLOWER, `partition log ${partition} is closed`, { partition });
  }
}

/** The partition was deleted (topic deletion): its ledgers and chain are gone. */
export class LogDeletedError extends LogError {
  constructor(partition: string) {
    super('LL_ERR_LOG_DELETED', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `partition ${partition} was deleted`, {
      partition,
    });
  }
}

/** An append at a given offset (mirroring, compaction output) that would not keep offsets increasing. */
export class InvalidAppendOffsetError extends LogError {
  constructor(partition: string, offset: number, logEndOffset: number) {
    super(
      'LL_ERR_LOG_INVALID_OFFSET',
      ErrorCode.INVALID_RECORD,
      `cannot append at offset ${offset} to ${partition}: offsets must be at least the log end offset ${logEndOffset}`,
      { partition, offset, logEndOffset },
    );
  }
}

/** AppendOptions.expectedLogEnd: the log does not end where the appender expected (a batch before it failed). */
export class UnexpectedLogEndError extends LogError {
  constructor(partition: string, offset: number, expectedLogEnd: number, logEndOffset: number) {
    super(
      'LL_ERR_LOG_INVALID_OFFSET',
      ErrorCode.INVALID_RECORD,
      `cannot append at offset ${offset} to ${partition}: the log ends at ${logEndOffset}, not at ${expectedLogEnd} as the appender expected (a batch before it was not stored)`,
      { partition, offset, logEndOffset },
    );
  }
}

export class LogInvalidArgumentError extends LogError {
  constructor(message: string, context: LogErrorContext = {}) {
    super('LL_ERR_LOG_INVALID_ARGUMENT', ErrorCode.INVALID_REQUEST, message, context);
  }
}

/** The ledger store or the metadata store failed underneath; `cause` is their error. */
export class LogStorageError extends LogError {
  constructor(message: string, context: LogErrorContext, cause: unknown) {
    const reason = cause instanceof Error ? `: ${cause.message}` : '';
    super('LL_ERR_LOG_STORAGE', ErrorCode.KAFKA_STORAGE_ERROR, `${message}${reason}`, context, { cause });
  }
}

/** The partition's chain in the metadata store cannot be decoded or is inconsistent. */
export class LogCorruptError extends LogError {
  constructor(message: string, context: LogErrorContext = {}) {
    super('LL_ERR_LOG_CORRUPT', ErrorCode.KAFKA_STORAGE_ERROR, message, context);
  }
}

/** A transaction marker refused before it was appended (Kafka's appendEndTxnMarker epoch checks). */
export class TxnMarkerRefusedError extends LogError {
  constructor(partition: string, kafkaErrorCode: number, message: string) {
    super('LL_ERR_LOG_TXN_MARKER', kafkaErrorCode, `${message} in ${partition}`, { partition });
    this.name = 'TxnMarkerRefusedError';
  }
}
