/**
 * Errors raised by the codec. Each class carries a stable `code` so callers can branch on it without
 * `instanceof` across module copies, and the context a reader of a log line needs (byte offset, API key, version).
 */

export class CodecError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** Bytes that do not decode: truncated, a length prefix that lies, an invalid varint, bad UTF-8 framing. */
export class DecodeError extends CodecError {
  /** Byte offset (from the start of the buffer the reader was given) where decoding went wrong. */
  readonly offset: number;
  constructor(message: string, offset: number, options?: { cause?: unknown }) {
    super('LL_ERR_DECODE', `${message} at byte ${offset}`, options);
    this.offset = offset;
  }
}

/** A value that cannot be written in the requested version (e.g. a non-default field the version lacks). */
export class EncodeError extends CodecError {
  constructor(message: string) {
    super('LL_ERR_ENCODE', message);
  }
}

/** An API key or version the codec has no schema for. */
export class UnsupportedVersionError extends CodecError {
  readonly apiKey: number;
  readonly apiVersion: number;
  constructor(apiKey: number, apiVersion: number) {
    super('LL_ERR_UNSUPPORTED_VERSION', `API key ${apiKey} has no version ${apiVersion}`);
    this.apiKey = apiKey;
    this.apiVersion = apiVersion;
  }
}
