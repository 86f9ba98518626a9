/**
 * Errors of the group coordinator. Each class is a LedgerlineError (protocol/errors.ts): a stable `code` to
 * branch on, the Kafka error it is answered with (`kafkaErrorCode`) and a context naming the group (and the
 * __consumer_offsets partition) it concerns.
 *
 * | code                          | meaning                                                                  |
 * |-------------------------------|--------------------------------------------------------------------------|
 * | LL_ERR_GROUP_API              | a Kafka error to answer with (`errorCode`), e.g. UNKNOWN_MEMBER_ID; the  |
 * |                               | operation changed nothing. Kafka's ApiException thrown by GroupMetadata- |
 * |                               | Manager and turned into a response field by the service.               |
 * | LL_ERR_COORDINATOR_STORAGE    | appending to or reading the __consumer_offsets log failed; answered as   |
 * |                               | COORDINATOR_NOT_AVAILABLE (retriable) and the partition is reloaded      |
 * | LL_ERR_COORDINATOR_CORRUPT    | a stored coordinator record cannot be decoded; UNKNOWN_SERVER_ERROR      |
 * | LL_ERR_EMBEDDED_PROTOCOL      | a classic member's subscription or assignment does not parse (Kafka's    |
 * |                               | SchemaException); INCONSISTENT_GROUP_PROTOCOL, as a JoinGroup whose      |
 * |                               | protocol cannot be read is answered                                      |
 */
import { ErrorCode, errorByCode } from '../../protocol/error-codes.js';
import { LedgerlineError } from '../../protocol/errors.js';

export type CoordinatorErrorCode = 'LL_ERR_GROUP_API' | 'LL_ERR_COORDINATOR_STORAGE' | 'LL_ERR_COORDINATOR_CORRUPT';

export interface CoordinatorErrorContext {
  readonly groupId?: string;
  readonly memberId?: string;
  /** The __consumer_offsets partition. */
  readonly partition?: number;
  readonly offset?: number;
}

export class CoordinatorError extends LedgerlineError {
  declare readonly code: CoordinatorErrorCode;
  constructor(
    code: CoordinatorErrorCode,
    kafkaErrorCode: number,
    message: string,
    readonly context: CoordinatorErrorContext = {},
    options?: { cause?: unknown },
  ) {
    super(code, kafkaErrorCode, message, options);
  }
}

/** A Kafka error code (and message) for the response; thrown by an operation before it changes anything. */
export class GroupApiError extends CoordinatorError {
  constructor(
    readonly errorCode: number,
    message?: string,
    context: CoordinatorErrorContext = {},
  ) {
    super('LL_ERR_GROUP_API', errorCode, message ?? errorByCode(errorCode).message ?? errorByCode(errorCode).name, context);
  }
}

/** The __consumer_offsets log could not be written or read. */
export class CoordinatorStorageError extends CoordinatorError {
  constructor(message: string, context: CoordinatorErrorContext, cause: unknown) {
    super('LL_ERR_COORDINATOR_STORAGE', ErrorCode.COORDINATOR_NOT_AVAILABLE, message, context, { cause });
  }
}

/** A stored record is not a coordinator record this version can read. */
export class CoordinatorCorruptError extends CoordinatorError {
  constructor(message: string, context: CoordinatorErrorContext, cause?: unknown) {
    super('LL_ERR_COORDINATOR_CORRUPT', ErrorCode.UNKNOWN_SERVER_ERROR, message, context, { cause });
  }
}

/** A subscription or assignment that cannot be read (Kafka's SchemaException). */
export class EmbeddedProtocolError extends LedgerlineError {
  constructor(message: string) {
    super('LL_ERR_EMBEDDED_PROTOCOL', ErrorCode.INCONSISTENT_GROUP_PROTOCOL, message);
  }
}

/**
 * The Kafka error code a failed operation answers with: its own for a GroupApiError; COORDINATOR_NOT_AVAILABLE
 * for a storage failure (Kafka's appendGroupMetadataErrorToResponseError maps log failures to it, and clients
 * retry after looking the coordinator up again); UNKNOWN_SERVER_ERROR for anything else.
 */
export function errorCodeOf(err: unknown): number {
  // Only the coordinator's own errors: a lower layer's mapping (a fenced log's NOT_LEADER_OR_FOLLOWER) is not
  // a code the group APIs define.
  if (err instanceof CoordinatorError) return err.kafkaErrorCode;
  return ErrorCode.UNKNOWN_SERVER_ERROR;
}

/** The message to put in responses that carry one (ConsumerGroupHeartbeat, FindCoordinator). */
export function errorMessageOf(err: unknown): string | null {
  if (err instanceof GroupApiError) return err.message;
  const code = errorCodeOf(err);
  return errorByCode(code).message;
}
