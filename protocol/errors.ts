/**
 * Ledgerline's one error model. Every error Ledgerline raises derives from `LedgerlineError`, which carries
 *   - `code`: a stable string (`LL_ERR_...`) to branch on without `instanceof` across module copies and to
 *     grep logs for;
 *   - `kafkaErrorCode`: the Kafka error (protocol/error-codes.ts) a broker answers with when this error ends
 *     a request's handling, as Kafka's `Errors.forException` maps its exception classes; an error with no
 *     Kafka meaning of its own maps to UNKNOWN_SERVER_ERROR, as any non-ApiException does in Kafka;
 *   - `cause` where another layer failed, and per-layer context (byte offset, ledger, partition, group, ...).
 *
 * `kafkaErrorOf(err, fallback)` turns anything caught into the code to answer with.
 *
 * The codes, by where they are raised (each file's header has its table):
 *
 * | where                      | codes                                                                      |
 * |----------------------------|----------------------------------------------------------------------------|
 * | protocol/errors.ts         | LL_ERR_DECODE (INVALID_REQUEST), LL_ERR_ENCODE (UNSUPPORTED_VERSION),      |
 * |                            | LL_ERR_UNSUPPORTED_VERSION (UNSUPPORTED_VERSION)                           |
 * | protocol/wire/frames.ts    | LL_ERR_FRAME_SIZE (INVALID_REQUEST; the connection is closed)              |
 * | protocol/records/          | LL_ERR_CORRUPT_RECORD, LL_ERR_INVALID_RECORD, LL_ERR_INVALID_TIMESTAMP,    |
 * |                            | LL_ERR_RECORD_TOO_LARGE, LL_ERR_UNSUPPORTED_COMPRESSION                    |
 * | protocol/compression/      | LL_ERR_COMPRESSION, LL_ERR_DECOMPRESSION_LIMIT, LL_ERR_UNSUPPORTED_COMPRESSION |
 * | src/ledger/errors.ts       | LL_ERR_LEDGER_*, LL_ERR_NO_SUCH_LEDGER, LL_ERR_ENTRY_TOO_LARGE, LL_ERR_INVALID_ARGUMENT |
 * | src/log/errors.ts          | LL_ERR_LOG_*                                                               |
 * | src/metadata/errors.ts     | LL_ERR_METADATA_*                                                          |
 * | src/cluster/errors.ts      | LL_ERR_TOPIC_REQUEST (its own Kafka code: TOPIC_ALREADY_EXISTS, ...)       |
 * | src/coordinator/errors.ts  | LL_ERR_GROUP_API, LL_ERR_COORDINATOR_STORAGE, LL_ERR_COORDINATOR_CORRUPT,  |
 * |                            | LL_ERR_EMBEDDED_PROTOCOL                                                   |
 * | src/client/errors.ts       | LL_ERR_CLIENT_*, LL_ERR_KAFKA                                              |
 * | src/config.ts              | LL_ERR_CONFIG                                                              |
 * | src/security/              | LL_ERR_CONFIG (listener security, JAAS, TLS), LL_ERR_SASL_AUTHENTICATION   |
 * |                            | (SASL_AUTHENTICATION_FAILED), LL_ERR_SASL_STATE (ILLEGAL_SASL_STATE),      |
 * |                            | LL_ERR_SSL_AUTHENTICATION, LL_ERR_SSL_PRINCIPAL (the connection closes),   |
 * |                            | LL_ERR_JWT_INVALID (SASL_AUTHENTICATION_FAILED), LL_ERR_JWKS               |
 */
import { ErrorCode } from './error-codes.js';

export class LedgerlineError extends Error {
  /** Stable code, `LL_ERR_...`. */
  readonly code: string;
  /** The Kafka error code a response carries when this error ends a request (protocol/error-codes.ts). */
  readonly kafkaErrorCode: number;
  constructor(code: string, kafkaErrorCode: number, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.kafkaErrorCode = kafkaErrorCode;
    this.name = new.target.name;
  }
}

/**
 * True for a LedgerlineError, also one from another copy of this module (checked by shape: an `LL_ERR_` code
 * and a numeric Kafka error code).
 */
export function isLedgerlineError(err: unknown): err is LedgerlineError {
  if (err instanceof LedgerlineError) return true;
  if (!(err instanceof Error)) return false;
  const e = err as { code?: unknown; kafkaErrorCode?: unknown };
  return typeof e.code === 'string' && e.code.startsWith('LL_ERR_') && typeof e.kafkaErrorCode === 'number';
}

/**
 * The Kafka error code to answer with for `err`: a LedgerlineError's own mapping, else `fallback` (usually
 * UNKNOWN_SERVER_ERROR, which Kafka's `Errors.forException` gives any exception it does not know).
 */
export function kafkaErrorOf(err: unknown, fallback: number = ErrorCode.UNKNOWN_SERVER_ERROR): number {
  return isLedgerlineError(err) ? err.kafkaErrorCode : fallback;
}

/** Errors raised by the codec: bytes that do not decode, values a version cannot carry, unknown versions. */
export class CodecError extends LedgerlineError {}

/**
 * Bytes that do not decode: truncated, a length prefix that lies, an invalid varint, bad UTF-8 framing.
 * A request body that does not parse is Kafka's InvalidRequestException (INVALID_REQUEST).
 */
export class DecodeError extends CodecError {
  /** Byte offset (from the start of the buffer the reader was given) where decoding went wrong. */
  readonly offset: number;
  constructor(message: string, offset: number, options?: { cause?: unknown }) {
    super('LL_ERR_DECODE', ErrorCode.INVALID_REQUEST, `${message} at byte ${offset}`, options);
    this.offset = offset;
  }
}

/**
 * A value that cannot be written in the requested version (e.g. a non-default field the version lacks):
 * Kafka's generated code throws UnsupportedVersionException for it.
 */
export class EncodeError extends CodecError {
  constructor(message: string) {
    super('LL_ERR_ENCODE', ErrorCode.UNSUPPORTED_VERSION, message);
  }
}

/** An API key or version the codec has no schema for. */
export class UnsupportedVersionError extends CodecError {
  readonly apiKey: number;
  readonly apiVersion: number;
  constructor(apiKey: number, apiVersion: number) {
    super('LL_ERR_UNSUPPORTED_VERSION', ErrorCode.UNSUPPORTED_VERSION, `API key ${apiKey} has no version ${apiVersion}`);
    this.apiKey = apiKey;
    this.apiVersion = apiVersion;
  }
}
