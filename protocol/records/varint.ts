/**
 * Zigzag varints as record fields use them (Kafka's ByteUtils.writeVarint/writeVarlong): sizes and writers
 * working directly on a Buffer at a position, for the batch builder's single-allocation encoding.
 */

/** Zigzag of a 32-bit signed integer, as an unsigned 32-bit number. */
function zigzag32(v: number): number {
  return ((v << 1) ^ (v >> 31)) >>> 0;
}

/** Zigzag of a safe integer (timestamp deltas), as a non-negative number. */
function zigzag64(v: number): number {
  return v >= 0 ? v * 2 : -v * 2 - 1;
}

function sizeOfUnsigned(u: number): number {
  let n = 1;
  while (u >= 0x80) {
    u = Math.floor(u / 128);
    n++;
  }
  return n;
}

export function sizeOfVarint(v: number): number {
  const u = zigzag32(v);
  if (u < 0x80) return 1;
  if (u < 0x4000) return 2;
  if (u < 0x200000) return 3;
  if (u < 0x10000000) return 4;
  return 5;
}

export function sizeOfVarlong(v: number): number {
  return sizeOfUnsigned(zigzag64(v));
}

/** Bytes taken by a nullable byte field: its varint length (-1 for null) and the bytes. */
export function sizeOfBytes(b: Uint8Array | null): number {
  return b === null ? 1 : sizeOfVarint(b.length) + b.length;
}

function writeUnsigned32(buf: Buffer, pos: number, u: number): number {
  while (u >= 0x80) {
    buf[pos++] = (u & 0x7f) | 0x80;
    u >>>= 7;
  }
  buf[pos++] = u;
  return pos;
}

export function writeVarint(buf: Buffer, pos: number, v: number): number {
  return writeUnsigned32(buf, pos, zigzag32(v));
}

export function writeVarlong(buf: Buffer, pos: number, v: number): number {
  let u = zigzag64(v);
  while (u >= 0x80) {
    buf[pos++] = (u % 128) | 0x80;
    u = Math.floor(u / 128);
  }
  buf[pos++] = u;
  return pos;
}

/** Writes a nullable byte field (varint length, -1 for null, then the bytes). */
export function writeBytes(buf: Buffer, pos: number, b: Buffer | null): number {
  if (b === null) return writeVarint(buf, pos, -1);
  pos = writeVarint(buf, pos, b.length);
  if (b.length < 32) {
    for (let i = 0; i < b.length; i++) buf[pos + i] = b[i]!;
  } else {
    b.copy(buf, pos);
  }
  return pos + b.length;
}
