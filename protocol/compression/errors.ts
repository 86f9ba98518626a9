/**
 * Errors of the compression codecs. Each carries the Kafka error code a broker would answer with if the bytes
 * came from a client, so a caller can turn it into response data without a lookup table of its own.
 */
import { CodecError } from '../errors.js';
import { ErrorCode } from '../error-codes.js';

/** Compressed bytes that do not decode (bad magic, truncated stream, checksum mismatch, invalid block). */
export class CompressionError extends CodecError {
  /** The codec's Kafka name: gzip, snappy, lz4, zstd. */
  readonly codec: string;
  /** Byte offset in the compressed input where decoding went wrong, when known. */
  readonly offset: number | undefined;
  /**
   * A corrupt compressed payload inside a batch whose CRC matched is corrupt data whatever its origin:
   * CORRUPT_MESSAGE ("... or is otherwise corrupt"). Kafka itself surfaces a decompression failure as an
   * unexpected KafkaException, i.e. UNKNOWN_SERVER_ERROR; the specific code tells the client more.
   */
  constructor(
    codec: string,
    message: string,
    options?: { cause?: unknown; offset?: number; code?: string; kafkaErrorCode?: number },
  ) {
    super(
      options?.code ?? 'LL_ERR_COMPRESSION',
      options?.kafkaErrorCode ?? ErrorCode.CORRUPT_MESSAGE,
      `${codec}: ${message}${options?.offset !== undefined ? ` at byte ${options.offset}` : ''}`,
      options?.cause !== undefined ? { cause: options.cause } : undefined,
    );
    this.codec = codec;
    this.offset = options?.offset;
  }
}

/**
 * Decompressing would produce more than the allowed number of bytes (a decompression bomb, a lying length
 * prefix, or simply data larger than the caller accepts). Raised before the output is allocated whenever the
 * format announces its size, otherwise as soon as the limit is crossed.
 */
export class DecompressionLimitError extends CompressionError {
  readonly limit: number;

  constructor(codec: string, limit: number, detail: string) {
    super(codec, `decompressed size exceeds the limit of ${limit} bytes (${detail})`, {
      code: 'LL_ERR_DECOMPRESSION_LIMIT',
      kafkaErrorCode: ErrorCode.MESSAGE_TOO_LARGE,
    });
    this.limit = limit;
  }
}

/** A codec id that is not one of Kafka's (0-4), or an operation the codec's library cannot do synchronously. */
export class UnsupportedCompressionError extends CodecError {
  readonly compressionType: number;

  constructor(compressionType: number, message: string) {
    super('LL_ERR_UNSUPPORTED_COMPRESSION', ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, message);
    this.compressionType = compressionType;
  }
}
