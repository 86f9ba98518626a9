// Type declarations for snappyjs 0.7 (pure JavaScript Snappy), which ships none.
declare module 'snappyjs' {
  const snappyjs: {
    /** Raw Snappy block: varint uncompressed length, then literal/copy elements. */
    compress(input: Buffer): Buffer;
    uncompress(input: Buffer, maxLength?: number): Buffer;
  };
  export = snappyjs;
}
