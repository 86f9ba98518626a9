/**
 * Errors raised by the client. Each class is a LedgerlineError (protocol/errors.ts): a stable `code` to
 * branch on, the Kafka error it stands for (`kafkaErrorCode`, as Kafka's Java client surfaces the same
 * failure), a `cause` where one exists, and the context a log reader needs: which broker, which request.
 *
 * | code                              | meaning                                                          | Kafka error             |
 * |-----------------------------------|------------------------------------------------------------------|-------------------------|
 * | LL_ERR_CLIENT_CONNECT             | the TCP/TLS connection could not be opened (refused, timed out)  | NETWORK_EXCEPTION       |
 * | LL_ERR_CLIENT_DISCONNECTED        | the connection closed while the request was in flight or queued  | NETWORK_EXCEPTION       |
 * | LL_ERR_CLIENT_REQUEST_TIMEOUT     | no response within the request's timeout                         | REQUEST_TIMED_OUT       |
 * | LL_ERR_CLIENT_PROTOCOL            | the broker broke the protocol: bad frame, unknown correlation id | UNKNOWN_SERVER_ERROR    |
 * | LL_ERR_CLIENT_UNSUPPORTED_VERSION | the broker and this codec share no version of an API             | UNSUPPORTED_VERSION     |
 * | LL_ERR_CLIENT_METADATA            | a topic or partition has no known leader / does not exist        | the metadata's own code, else UNKNOWN_TOPIC_OR_PARTITION |
 * | LL_ERR_CLIENT_CLOSED              | the connection or cluster was closed by its owner                | UNKNOWN_SERVER_ERROR    |
 * | LL_ERR_CLIENT_SASL                | SASL sign-in failed: mechanism, credentials, server's signature  | the broker's, else SASL_AUTHENTICATION_FAILED |
 * | LL_ERR_KAFKA                      | the broker answered with a Kafka error code the caller must see  | that code               |
 *
 * Per-partition Kafka errors in Produce/Fetch/ListOffsets answers are returned as data (`errorCode`), the
 * way Kafka's own clients see them; `KafkaResponseError` is thrown only where a helper has no result to
 * return (a failed ApiVersions handshake, a top-level Fetch error) or when a caller asks for it
 * (`throwIfError`).
 */
import { ErrorCode, errorByCode } from '../../protocol/error-codes.js';
import { LedgerlineError } from '../../protocol/errors.js';

/** Where a failure happened. Every field is optional; errors fill in what they know. */
export interface ClientErrorContext {
  /** `host:port` of the broker. */
  readonly broker?: string;
  readonly nodeId?: number;
  readonly apiKey?: number;
  readonly apiName?: string;
  readonly apiVersion?: number;
  readonly correlationId?: number;
  readonly clientId?: string | null;
  readonly topic?: string;
  readonly partition?: number;
}

export class ClientError extends LedgerlineError {
  readonly context: ClientErrorContext;
  constructor(
    code: string,
    message: string,
    context: ClientErrorContext = {},
    options?: { cause?: unknown },
    kafkaErrorCode: number = ErrorCode.UNKNOWN_SERVER_ERROR,
  ) {
    super(code, kafkaErrorCode, withContext(message, context), options);
    this.context = context;
  }
}

function withContext(message: string, c: ClientErrorContext): string {
  const parts: string[] = [];
  if (c.broker !== undefined) parts.push(`broker ${c.broker}${c.nodeId !== undefined ? ` (node ${c.nodeId})` : ''}`);
  if (c.apiName !== undefined) parts.push(`${c.apiName} v${c.apiVersion ?? '?'}`);
  if (c.correlationId !== undefined) parts.push(`correlation id ${c.correlationId}`);
  if (c.topic !== undefined) parts.push(`${c.topic}${c.partition !== undefined ? `-${c.partition}` : ''}`);
  return parts.length > 0 ? `${message} [${parts.join(', ')}]` : message;
}

/** The connection could not be established. */
export class ConnectError extends ClientError {
  constructor(message: string, context: ClientErrorContext, cause?: unknown) {
    super('LL_ERR_CLIENT_CONNECT', message, context, { cause }, ErrorCode.NETWORK_EXCEPTION);
  }
}

/** The connection closed (by the peer, by an error, or by `close()`) before the request was answered. */
export class ConnectionClosedError extends ClientError {
  constructor(message: string, context: ClientErrorContext, cause?: unknown) {
    super('LL_ERR_CLIENT_DISCONNECTED', message, context, { cause }, ErrorCode.NETWORK_EXCEPTION);
  }
}

/** No response arrived within the request's timeout (Kafka's `request.timeout.ms`). */
export class RequestTimeoutError extends ClientError {
  readonly timeoutMs: number;
  constructor(timeoutMs: number, context: ClientErrorContext) {
    super('LL_ERR_CLIENT_REQUEST_TIMEOUT', `no response within ${timeoutMs} ms`, context, undefined, ErrorCode.REQUEST_TIMED_OUT);
    this.timeoutMs = timeoutMs;
  }
}

/** The broker sent something that is not a valid answer: a frame too large or negative, an unexpected correlation id, bytes that do not decode. */
export class ProtocolViolationError extends ClientError {
  constructor(message: string, context: ClientErrorContext, cause?: unknown) {
    super('LL_ERR_CLIENT_PROTOCOL', message, context, { cause });
  }
}

/** The broker's version range of an API and this codec's do not overlap, or the broker lacks the API. */
export class UnsupportedApiVersionError extends ClientError {
  constructor(message: string, context: ClientErrorContext) {
    super('LL_ERR_CLIENT_UNSUPPORTED_VERSION', message, context, undefined, ErrorCode.UNSUPPORTED_VERSION);
  }
}

/** The cluster view cannot route a request: unknown topic, partition or leader. */
export class MetadataError extends ClientError {
  /** The Kafka error the metadata carried for the topic or partition, when it carried one. */
  readonly errorCode: number;
  constructor(message: string, context: ClientErrorContext, errorCode = 0) {
    super('LL_ERR_CLIENT_METADATA', message, context, undefined, errorCode !== 0 ? errorCode : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    this.errorCode = errorCode;
  }
}

/** The connection or cluster was closed by its owner; nothing more can be sent. */
export class ClientClosedError extends ClientError {
  constructor(what: string, context: ClientErrorContext = {}) {
    super('LL_ERR_CLIENT_CLOSED', `${what} is closed`, context);
  }
}

/**
 * Signing in failed (sasl-scram-client.ts): the broker refused the mechanism (UNSUPPORTED_SASL_MECHANISM, its
 * enabled list in the message) or the credentials (SASL_AUTHENTICATION_FAILED with the broker's message), or
 * this side refused the broker's answer (a SCRAM server signature that does not verify, too few iterations).
 * The connection is closed: Kafka's brokers close it after a failed exchange.
 */
export class SaslAuthenticationFailedError extends ClientError {
  /** The broker's error code, or SASL_AUTHENTICATION_FAILED for a failure found on this side. */
  readonly errorCode: number;
  constructor(message: string, context: ClientErrorContext, errorCode: number = ErrorCode.SASL_AUTHENTICATION_FAILED, cause?: unknown) {
    super('LL_ERR_CLIENT_SASL', message, context, { cause }, errorCode);
    this.errorCode = errorCode;
  }
}

/** A Kafka error code in a response, raised as an exception. */
export class KafkaResponseError extends ClientError {
  readonly errorCode: number;
  /** Kafka's name for the code, e.g. `NOT_LEADER_OR_FOLLOWER`. */
  readonly errorName: string;
  /** Whether Kafka's clients retry on this error (its exception extends RetriableException). */
  readonly retriable: boolean;
  /** The broker's error message, when the response carries one. */
  readonly brokerMessage: string | null;
  constructor(errorCode: number, context: ClientErrorContext, brokerMessage: string | null = null) {
    const info = errorByCode(errorCode);
    super(
      'LL_ERR_KAFKA',
      `${info.name} (${errorCode}): ${brokerMessage ?? info.message ?? 'no message'}`,
      context,
      undefined,
      errorCode,
    );
    this.errorCode = errorCode;
    this.errorName = info.name;
    this.retriable = info.retriable;
    this.brokerMessage = brokerMessage;
  }
}

/** Throws a KafkaResponseError when `errorCode` is not NONE (0). */
export function throwIfError(errorCode: number, context: ClientErrorContext = {}, brokerMessage: string | null = null): void {
  if (errorCode !== 0) throw new KafkaResponseError(errorCode, context, brokerMessage);
}
