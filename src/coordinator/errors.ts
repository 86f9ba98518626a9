/**
 * Errors of the group coordinator. Each class has a stable `code` to branch on and a context naming the
 * group (and the __consumer_offsets partition) it concerns.
 *
 * | code                          | meaning                                                                  |
 * |-------------------------------|--------------------------------------------------------------------------|
 * | LL_ERR_GROUP_API              | a Kafka error to answer with (`errorCode`), e.g. UNKNOWN_MEMBER_ID; the  |
 * |                               | operation changed nothing. Kafka's ApiException thrown by GroupMetadata- |
 * |                               | Manager and turned into a response field by the service.               |
 * | LL_ERR_COORDINATOR_STORAGE    | appending to or reading the __consumer_offsets log failed; answered as   |
 * |                               | COORDINATOR_NOT_AVAILABLE (retriable) and the partition is reloaded      |
 * | LL_ERR_COORDINATOR_CORRUPT    | a stored coordinator record cannot be decoded                            |
 */
import { ErrorCode, errorByCode } from '../../protocol/error-codes.js';

export interface CoordinatorErrorContext {
  readonly groupId?: string;
  readonly memberId?: string;
  /** The __consumer_offsets partition. */
  readonly partition?: number;
  readonly offset?: number;
}

export class CoordinatorError extends Error {
  constructor(
    readonly code: 'LL_ERR_GROUP_API' | 'LL_ERR_COORDINATOR_STORAGE' | 'LL_ERR_COORDINATOR_CORRUPT',
    message: string,
    readonly context: CoordinatorErrorContext = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A Kafka error code (and message) for the response; thrown by an operation before it changes anything. */
export class GroupApiError extends CoordinatorError {
  constructor(
    readonly errorCode: number,
    message?: string,
    context: CoordinatorErrorContext = {},
  ) {
    super('LL_ERR_GROUP_API', message ?? errorByCode(errorCode).message ?? errorByCode(errorCode).name, context);
  }
}

/** The __consumer_offsets log could not be written or read. */
export class CoordinatorStorageError extends CoordinatorError {
  constructor(message: string, context: CoordinatorErrorContext, cause: unknown) {
    super('LL_ERR_COORDINATOR_STORAGE', message, context, { cause });
  }
}

/** A stored record is not a coordinator record this version can read. */
export class CoordinatorCorruptError extends CoordinatorError {
  constructor(message: string, context: CoordinatorErrorContext, cause?: unknown) {
    super('LL_ERR_COORDINATOR_CORRUPT', message, context, { cause });
  }
}

/**
 * The Kafka error code a failed operation answers with: its own for a GroupApiError; COORDINATOR_NOT_AVAILABLE
 * for a storage failure (Kafka's appendGroupMetadataErrorToResponseError maps log failures to it, and clients
 * retry after looking the coordinator up again); UNKNOWN_SERVER_ERROR for anything else.
 */
export function errorCodeOf(err: unknown): number {
  if (err instanceof GroupApiError) return err.errorCode;
  if (err instanceof CoordinatorStorageError) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
  return ErrorCode.UNKNOWN_SERVER_ERROR;
}

/** The message to put in responses that carry one (ConsumerGroupHeartbeat, FindCoordinator). */
export function errorMessageOf(err: unknown): string | null {
  if (err instanceof GroupApiError) return err.message;
  const code = errorCodeOf(err);
  return errorByCode(code).message;
}
