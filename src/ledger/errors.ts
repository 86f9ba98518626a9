/**
 * Errors raised by ledger stores. Each class is a LedgerlineError (protocol/errors.ts): a stable `code` to
 * branch on, the Kafka error a request that ends on it is answered with (`kafkaErrorCode`), a `cause` where
 * one exists, and the ledger/entry/file it concerns.
 *
 * | code                          | Kafka error                                 | as Kafka maps                        |
 * |-------------------------------|---------------------------------------------|--------------------------------------|
 * | LL_ERR_LEDGER_STORAGE         | KAFKA_STORAGE_ERROR (56)                    | an IOException on a log dir          |
 * | LL_ERR_LEDGER_CORRUPT         | KAFKA_STORAGE_ERROR (56)                    | stored bytes unreadable: the log dir |
 * |                               |                                             | is at fault, not the client          |
 * | LL_ERR_ENTRY_TOO_LARGE        | MESSAGE_TOO_LARGE (10)                      | RecordTooLargeException              |
 * | LL_ERR_LEDGER_FENCED          | NOT_LEADER_OR_FOLLOWER (6): ownership moved | a fenced leader epoch                |
 * | LL_ERR_LEDGER_STORE_CLOSED    | NOT_LEADER_OR_FOLLOWER (6): the broker is   | a partition going offline here       |
 * |                               | shutting down; clients go elsewhere         |                                      |
 * | LL_ERR_LEDGER_STORE_LOCKED    | KAFKA_STORAGE_ERROR (56); startup only      | the log dir cannot be used           |
 * | LL_ERR_LEDGER_SEALED          | UNKNOWN_SERVER_ERROR: internal, the log     |                                      |
 * |                               | rolls to a new ledger                       |                                      |
 * | LL_ERR_NO_SUCH_LEDGER         | KAFKA_STORAGE_ERROR (56): a ledger the log  | a segment file gone from its log dir |
 * |                               | refers to is gone                           |                                      |
 * | LL_ERR_INVALID_ARGUMENT       | UNKNOWN_SERVER_ERROR: a caller's bug        | IllegalArgumentException             |
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import { LedgerlineError } from '../../protocol/errors.js';
import type { EntryId, LedgerId } from './types.js';

export type LedgerErrorCode =
  | 'LL_ERR_LEDGER_STORAGE'
  | 'LL_ERR_LEDGER_CORRUPT'
  | 'LL_ERR_ENTRY_TOO_LARGE'
  | 'LL_ERR_LEDGER_FENCED'
  | 'LL_ERR_LEDGER_STORE_CLOSED'
  | 'LL_ERR_LEDGER_STORE_LOCKED'
  | 'LL_ERR_LEDGER_SEALED'
  | 'LL_ERR_NO_SUCH_LEDGER'
  | 'LL_ERR_INVALID_ARGUMENT';

/** The Kafka error of each code (the table above). */
export const LEDGER_KAFKA_ERRORS: Readonly<Record<LedgerErrorCode, number>> = {
  LL_ERR_LEDGER_STORAGE: ErrorCode.KAFKA_STORAGE_ERROR,
  LL_ERR_LEDGER_CORRUPT: ErrorCode.KAFKA_STORAGE_ERROR,
  LL_ERR_ENTRY_TOO_LARGE: ErrorCode.MESSAGE_TOO_LARGE,
  LL_ERR_LEDGER_FENCED: ErrorCode.NOT_LEADER_OR_FOLLOWER,
  LL_ERR_LEDGER_STORE_CLOSED: ErrorCode.NOT_LEADER_OR_FOLLOWER,
  LL_ERR_LEDGER_STORE_LOCKED: ErrorCode.KAFKA_STORAGE_ERROR,
  LL_ERR_LEDGER_SEALED: ErrorCode.UNKNOWN_SERVER_ERROR,
  LL_ERR_NO_SUCH_LEDGER: ErrorCode.KAFKA_STORAGE_ERROR,
  LL_ERR_INVALID_ARGUMENT: ErrorCode.UNKNOWN_SERVER_ERROR,
};

export interface LedgerErrorContext {
  readonly ledgerId?: LedgerId;
  readonly entryId?: EntryId;
  /** File the failure concerns, relative to the store directory. */
  readonly file?: string;
  /** Byte position in that file. */
  readonly position?: number;
}

export class LedgerError extends LedgerlineError {
  declare readonly code: LedgerErrorCode;
  readonly context: LedgerErrorContext;
  constructor(code: LedgerErrorCode, message: string, context: LedgerErrorContext = {}, options?: { cause?: unknown }) {
    super(code, LEDGER_KAFKA_ERRORS[code], message, options);
    this.context = context;
  }
}

/** The ledger does not exist (never created, or deleted). */
export class NoSuchLedgerError extends LedgerError {
  constructor(ledgerId: LedgerId) {
    super('LL_ERR_NO_SUCH_LEDGER', `ledger ${ledgerId} does not exist`, { ledgerId });
  }
}

/** An append to a ledger that its writer sealed. */
export class LedgerSealedError extends LedgerError {
  constructor(ledgerId: LedgerId) {
    super('LL_ERR_LEDGER_SEALED', `ledger ${ledgerId} is sealed`, { ledgerId });
  }
}

/** An append through a writer whose ledger was fenced by another party (BookKeeper's LedgerFencedException). */
export class LedgerFencedError extends LedgerError {
  constructor(ledgerId: LedgerId) {
    super('LL_ERR_LEDGER_FENCED', `ledger ${ledgerId} was fenced by another opener`, { ledgerId });
  }
}

/**
 * The file system failed (EIO, ENOSPC, a failed fsync…). The operation had no effect visible to readers.
 * `errno` is the underlying error's code when it has one (e.g. 'ENOSPC').
 */
export class LedgerStorageError extends LedgerError {
  readonly errno: string | undefined;
  constructor(message: string, context: LedgerErrorContext, cause: unknown) {
    const errno = typeof (cause as { code?: unknown })?.code === 'string' ? (cause as { code: string }).code : undefined;
    super('LL_ERR_LEDGER_STORAGE', `${message}${errno ? ` (${errno})` : ''}`, context, { cause });
    this.errno = errno;
  }
}

/** Stored bytes do not match their checksum or framing: media corruption or a foreign file. */
export class LedgerCorruptError extends LedgerError {
  constructor(message: string, context: LedgerErrorContext = {}) {
    super('LL_ERR_LEDGER_CORRUPT', message, context);
  }
}

/** An entry larger than the store's maximum entry size (Kafka's message.max.bytes). */
export class EntryTooLargeError extends LedgerError {
  constructor(ledgerId: LedgerId, size: number, max: number) {
    super('LL_ERR_ENTRY_TOO_LARGE', `entry of ${size} bytes exceeds the maximum of ${max}`, { ledgerId });
  }
}

/** Any call after `close()`. */
export class LedgerStoreClosedError extends LedgerError {
  constructor() {
    super('LL_ERR_LEDGER_STORE_CLOSED', 'the ledger store is closed');
  }
}

/** The store directory is in use by another live process or another open store in this process. */
export class LedgerStoreLockedError extends LedgerError {
  constructor(dir: string, file: string) {
    super('LL_ERR_LEDGER_STORE_LOCKED', `ledger store ${dir} is in use by another process or another open store in this process`, { file });
  }
}

/** A malformed argument: a negative or reversed entry range, a non-integer id. */
export class LedgerInvalidArgumentError extends LedgerError {
  constructor(message: string, context: LedgerErrorContext = {}) {
    super('LL_ERR_INVALID_ARGUMENT', message, context);
  }
}
