/**
 * Errors raised by metadata stores. Each class is a LedgerlineError (protocol/errors.ts): a stable `code` so
 * callers can branch on it without `instanceof` across module copies, the Kafka error a request that ends on
 * it is answered with (`kafkaErrorCode`), a `cause` when another layer failed, and the context a reader of a
 * log line needs (key, lease, revision, path).
 *
 * The metadata store plays the part of Kafka's controller quorum (KRaft; ZooKeeper before it), so its
 * failures map as a broker's failures to reach or write through the controller do:
 *
 * | code                              | Kafka error                                                        |
 * |-----------------------------------|--------------------------------------------------------------------|
 * | LL_ERR_METADATA_CLOSED            | NOT_CONTROLLER (41): the store is gone here (shutdown); retriable, |
 * |                                   | a client looks the cluster up again                                |
 * | LL_ERR_METADATA_STORAGE           | KAFKA_STORAGE_ERROR (56): the engine's disk failed                 |
 * | LL_ERR_METADATA_LOCKED            | KAFKA_STORAGE_ERROR (56); startup only                             |
 * | LL_ERR_METADATA_FORMAT            | KAFKA_STORAGE_ERROR (56); startup only                             |
 * | LL_ERR_METADATA_CONFLICT          | REQUEST_TIMED_OUT (7): concurrent writers kept winning; retriable, |
 * |                                   | as the controller times out an operation it cannot complete        |
 * | LL_ERR_METADATA_LEASE_NOT_FOUND   | NOT_LEADER_OR_FOLLOWER (6): the lease that made this broker an     |
 * |                                   | owner is gone, as a fenced epoch is                                |
 * | LL_ERR_METADATA_INVALID_ARGUMENT  | INVALID_REQUEST (42): more than one request may write (etcd's      |
 * |                                   | limits) or a key no request should produce                         |
 * | LL_ERR_METADATA_COMPACTED,        | UNKNOWN_SERVER_ERROR: internal to watches and compaction           |
 * | LL_ERR_METADATA_FUTURE_REVISION,  |                                                                    |
 * | LL_ERR_METADATA_WATCH_LISTENER    |                                                                    |
 *
 * A compare that does not hold is not an error: compare-and-set, conditional delete and txn report it as
 * data (`succeeded: false`), like etcd's TxnResponse.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import { LedgerlineError } from '../../protocol/errors.js';

export type MetadataErrorCode =
  | 'LL_ERR_METADATA_CLOSED'
  | 'LL_ERR_METADATA_INVALID_ARGUMENT'
  | 'LL_ERR_METADATA_LEASE_NOT_FOUND'
  | 'LL_ERR_METADATA_COMPACTED'
  | 'LL_ERR_METADATA_FUTURE_REVISION'
  | 'LL_ERR_METADATA_LOCKED'
  | 'LL_ERR_METADATA_FORMAT'
  | 'LL_ERR_METADATA_STORAGE'
  | 'LL_ERR_METADATA_CONFLICT'
  | 'LL_ERR_METADATA_WATCH_LISTENER';

/** The Kafka error of each code (the table above). */
export const METADATA_KAFKA_ERRORS: Readonly<Record<MetadataErrorCode, number>> = {
  LL_ERR_METADATA_CLOSED: ErrorCode.NOT_CONTROLLER,
  LL_ERR_METADATA_INVALID_ARGUMENT: ErrorCode.INVALID_REQUEST,
  LL_ERR_METADATA_LEASE_NOT_FOUND: ErrorCode.NOT_LEADER_OR_FOLLOWER,
  LL_ERR_METADATA_COMPACTED: ErrorCode.UNKNOWN_SERVER_ERROR,
  LL_ERR_METADATA_FUTURE_REVISION: ErrorCode.UNKNOWN_SERVER_ERROR,
  LL_ERR_METADATA_LOCKED: ErrorCode.KAFKA_STORAGE_ERROR,
  LL_ERR_METADATA_FORMAT: ErrorCode.KAFKA_STORAGE_ERROR,
  LL_ERR_METADATA_STORAGE: ErrorCode.KAFKA_STORAGE_ERROR,
  LL_ERR_METADATA_CONFLICT: ErrorCode.REQUEST_TIMED_OUT,
  LL_ERR_METADATA_WATCH_LISTENER: ErrorCode.UNKNOWN_SERVER_ERROR,
};

export class MetadataError extends LedgerlineError {
  declare readonly code: MetadataErrorCode;
  /** What the failing call was about: key, lease id, revision, path. Safe to log. */
  readonly context: Readonly<Record<string, unknown>>;
  constructor(
    code: MetadataErrorCode,
    message: string,
    context: Record<string, unknown> = {},
    options?: { cause?: unknown },
  ) {
    super(code, METADATA_KAFKA_ERRORS[code], message, options);
    this.context = context;
  }
}

/** The store was closed; no call succeeds after `close()`. */
export class MetadataClosedError extends MetadataError {
  constructor(operation: string) {
    super('LL_ERR_METADATA_CLOSED', `metadata store is closed (${operation})`, { operation });
  }
}

/**
 * A request the store will never accept as written: an empty or malformed key, a txn that writes one key
 * twice, more operations or bytes than the limits (etcd's --max-txn-ops and --max-request-bytes).
 */
export class MetadataInvalidArgumentError extends MetadataError {
  constructor(message: string, context: Record<string, unknown> = {}) {
    super('LL_ERR_METADATA_INVALID_ARGUMENT', message, context);
  }
}

/** The lease does not exist: never granted, revoked, or expired (etcd: "requested lease not found"). */
export class MetadataLeaseNotFoundError extends MetadataError {
  readonly lease: string;
  constructor(lease: string, operation: string) {
    super('LL_ERR_METADATA_LEASE_NOT_FOUND', `lease ${lease} not found (${operation})`, { lease, operation });
    this.lease = lease;
  }
}

/**
 * The history a watch asked for was discarded. Start again from a fresh `list` (its `revision` + 1), as with
 * etcd's ErrCompacted / WatchResponse.compact_revision.
 */
export class MetadataCompactedError extends MetadataError {
  readonly compactRevision: number;
  readonly requestedRevision: number;
  constructor(requestedRevision: number, compactRevision: number) {
    super(
      'LL_ERR_METADATA_COMPACTED',
      `revision ${requestedRevision} has been compacted; the oldest revision kept is ${compactRevision}`,
      { requestedRevision, compactRevision },
    );
    this.compactRevision = compactRevision;
    this.requestedRevision = requestedRevision;
  }
}

/** A revision above the store's current revision was given where only past ones make sense (compaction). */
export class MetadataFutureRevisionError extends MetadataError {
  constructor(requestedRevision: number, currentRevision: number) {
    super(
      'LL_ERR_METADATA_FUTURE_REVISION',
      `revision ${requestedRevision} is ahead of the current revision ${currentRevision}`,
      { requestedRevision, currentRevision },
    );
  }
}

/** Another process (or another store in this process) has the data directory open. */
export class MetadataLockedError extends MetadataError {
  constructor(path: string, cause?: unknown) {
    super('LL_ERR_METADATA_LOCKED', `metadata store ${path} is open in another process or store`, { path }, { cause });
  }
}

/** The file is not a metadata store, or is one written by a newer format this code cannot read. */
export class MetadataFormatError extends MetadataError {
  constructor(message: string, context: Record<string, unknown>) {
    super('LL_ERR_METADATA_FORMAT', message, context);
  }
}

/** The storage engine failed (I/O error, disk full, corruption). The operation was not applied. */
export class MetadataStorageError extends MetadataError {
  constructor(operation: string, cause: unknown, context: Record<string, unknown> = {}) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super('LL_ERR_METADATA_STORAGE', `metadata storage failed during ${operation}: ${reason}`, { operation, ...context }, {
      cause,
    });
  }
}

/** A read-modify-write lost its compare-and-set race more times than it was allowed to retry. */
export class MetadataConflictError extends MetadataError {
  constructor(key: string, attempts: number) {
    super('LL_ERR_METADATA_CONFLICT', `${key}: compare-and-set lost ${attempts} times in a row`, { key, attempts });
  }
}

/** A watch listener threw; the watch was cancelled so that no later event is delivered out of context. */
export class MetadataWatchListenerError extends MetadataError {
  constructor(watchId: number, cause: unknown) {
    super('LL_ERR_METADATA_WATCH_LISTENER', `watch ${watchId} listener threw; the watch was cancelled`, { watchId }, {
      cause,
    });
  }
}
