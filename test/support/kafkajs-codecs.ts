/**
 * kafkajs ships gzip only; snappy, LZ4 and zstd are pluggable codecs (`CompressionCodecs[type] = () =>
 * codec`). These plug in the project's own codecs (protocol/compression), so kafkajs can produce and read
 * every compression type a Kafka client may use.
 */
import kafkajs from 'kafkajs';
import { CompressionType, compress, decompress } from '../../protocol/compression/index.js';

const { CompressionCodecs, CompressionTypes } = kafkajs;

function codec(id: number): () => { compress(encoder: { buffer: Buffer }): Promise<Buffer>; decompress(buffer: Buffer): Promise<Buffer> } {
  return () => ({
    compress: (encoder) => compress(id, encoder.buffer),
    decompress: (buffer) => decompress(id, buffer),
  });
}

/** Registers snappy, LZ4 and zstd with kafkajs (idempotent). */
export function registerKafkajsCodecs(): void {
  CompressionCodecs[CompressionTypes.Snappy] = codec(CompressionType.SNAPPY);
  CompressionCodecs[CompressionTypes.LZ4] = codec(CompressionType.LZ4);
  CompressionCodecs[CompressionTypes.ZSTD] = codec(CompressionType.ZSTD);
}
