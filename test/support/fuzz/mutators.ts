/**
 * Byte-level mutations of an encoded request frame. A TracingWriter records, while the generated encoder
 * writes, where every length prefix, array count, integer and tag-buffer varint sits, so the structural
 * mutations can make exactly those lie (a string length past the end, an array count of 2^31-1, a compact
 * length of 0 meaning null, an over-long varint) while the blind ones flip, cut, insert and repeat bytes
 * anywhere. The size prefix is recomputed afterwards: lies about the frame size itself are the runner's
 * frame cases, which need their own socket choreography.
 */
import { encodeRequestHeader } from '../../../protocol/messages/request-header.gen.js';
import { requestHeaderVersion, type ApiDescriptor } from '../../../protocol/api.js';
import { Writer } from '../../../protocol/wire/writer.js';
import type { Prng } from './prng.js';

export type SiteWidth = 1 | 2 | 4 | 8 | 'uvarint';
export type SiteRole = 'length' | 'count' | 'int' | 'varint';

export interface Site {
  at: number;
  width: SiteWidth;
  /** Bytes the site takes (its width, or the varint's encoded size). */
  size: number;
  role: SiteRole;
}

/** A Writer that remembers where each length, count and integer was written. */
export class TracingWriter extends Writer {
  readonly sites: Site[] = [];
  private inside = 0;

  private mark(role: SiteRole, width: SiteWidth, fn: () => void): void {
    const at = this.length;
    const outer = this.inside === 0;
    this.inside++;
    try {
      fn();
    } finally {
      this.inside--;
    }
    if (outer) this.sites.push({ at, width, size: this.length - at, role });
  }

  override int8(v: number): void {
    this.mark('int', 1, () => super.int8(v));
  }
  override int16(v: number): void {
    this.mark('int', 2, () => super.int16(v));
  }
  override int32(v: number): void {
    this.mark('int', 4, () => super.int32(v));
  }
  override int64(v: bigint): void {
    this.mark('int', 8, () => super.int64(v));
  }
  override uvarint(v: number): void {
    this.mark('varint', 'uvarint', () => super.uvarint(v));
  }
  override string(s: string): void {
    this.lengthThen(2, () => super.string(s));
  }
  override nullableString(s: string | null): void {
    if (s === null) return this.mark('length', 2, () => super.nullableString(null));
    this.string(s);
  }
  override compactString(s: string): void {
    this.lengthThen(uvarintSize(Buffer.byteLength(s, 'utf8') + 1), () => super.compactString(s));
  }
  override compactNullableString(s: string | null): void {
    if (s === null) return this.mark('length', 'uvarint', () => super.compactNullableString(null));
    this.compactString(s);
  }
  override bytes(b: Buffer): void {
    this.lengthThen(4, () => super.bytes(b));
  }
  override nullableBytes(b: Buffer | null): void {
    if (b === null) return this.mark('length', 4, () => super.nullableBytes(null));
    this.bytes(b);
  }
  override compactBytes(b: Buffer): void {
    this.lengthThen(uvarintSize(b.length + 1), () => super.compactBytes(b));
  }
  override compactNullableBytes(b: Buffer | null): void {
    if (b === null) return this.mark('length', 'uvarint', () => super.compactNullableBytes(null));
    this.compactBytes(b);
  }
  override records(r: Buffer | readonly Buffer[]): void {
    this.lengthThen(4, () => super.records(r));
  }
  override nullableRecords(r: Buffer | readonly Buffer[] | null): void {
    if (r === null) return this.mark('length', 4, () => super.nullableRecords(null));
    this.records(r);
  }
  override compactRecords(r: Buffer | readonly Buffer[]): void {
    this.lengthThen(uvarintSize(recordsSize(r) + 1), () => super.compactRecords(r));
  }
  override compactNullableRecords(r: Buffer | readonly Buffer[] | null): void {
    if (r === null) return this.mark('length', 'uvarint', () => super.compactNullableRecords(null));
    this.compactRecords(r);
  }
  override arrayLength(n: number): void {
    this.mark('count', 4, () => super.arrayLength(n));
  }
  override compactArrayLength(n: number): void {
    this.mark('count', 'uvarint', () => super.compactArrayLength(n));
  }

  /** Records a length prefix: fixed `width` bytes, or a varint of the given encoded size (`-n`). */
  private lengthThen(width: 2 | 4 | number, write: () => void): void {
    const at = this.length;
    const outer = this.inside === 0;
    this.inside++;
    try {
      write();
    } finally {
      this.inside--;
    }
    if (!outer) return;
    if (width < 0) this.sites.push({ at, width: 'uvarint', size: -width, role: 'length' });
    else this.sites.push({ at, width: width as 2 | 4, size: width, role: 'length' });
  }
}

/** `-(encoded size)` of a uvarint, the form lengthThen takes for varint prefixes. */
function uvarintSize(v: number): number {
  let n = 1;
  while (v >= 0x80) {
    v = Math.floor(v / 128);
    n++;
  }
  return -n;
}

function recordsSize(r: Buffer | readonly Buffer[]): number {
  if (Buffer.isBuffer(r)) return r.length;
  let n = 0;
  for (const b of r as readonly Buffer[]) n += b.length;
  return n;
}

export interface EncodedFrame {
  /** Size prefix included. */
  bytes: Buffer;
  /** Where the body starts (after the request header). */
  bodyAt: number;
  sites: Site[];
}

/** Encodes a request frame with a TracingWriter. Throws what the encoder throws for unencodable values. */
export function encodeTracedFrame<Req>(api: ApiDescriptor<Req, unknown>, version: number, correlationId: number, clientId: string | null, body: Req): EncodedFrame {
  const w = new TracingWriter(512);
  w.int32(0);
  encodeRequestHeader(w, { requestApiKey: api.apiKey, requestApiVersion: version, correlationId, clientId }, requestHeaderVersion(api, version));
  const bodyAt = w.length;
  api.request.encode(w, body, version);
  const bytes = Buffer.from(w.toBuffer());
  bytes.writeInt32BE(bytes.length - 4, 0);
  return { bytes, bodyAt, sites: w.sites.filter((s) => s.at >= 4) };
}

function uvarintBytes(v: number): Buffer {
  const out: number[] = [];
  let x = v;
  while (x >= 0x80) {
    out.push((x & 0x7f) | 0x80);
    x = Math.floor(x / 128);
  }
  out.push(x);
  return Buffer.from(out);
}

function splice(buf: Buffer, at: number, remove: number, insert: Buffer): Buffer {
  return Buffer.concat([buf.subarray(0, at), insert, buf.subarray(at + remove)]);
}

function fixSize(buf: Buffer): Buffer {
  if (buf.length >= 4) buf.writeInt32BE(buf.length - 4, 0);
  return buf;
}

/** A lie in place of a length, count or integer. */
function lieAt(rng: Prng, frame: Buffer, site: Site): { bytes: Buffer; what: string } {
  if (site.width === 'uvarint') {
    const old = readUvarint(frame, site.at);
    const choice = rng.weighted<[string, Buffer]>([
      [2, ['0 (null)', uvarintBytes(0)]],
      [2, ['old+1', uvarintBytes(old + 1)]],
      [2, ['old-1', uvarintBytes(Math.max(0, old - 1))]],
      [2, ['2^31', uvarintBytes(2 ** 31)]],
      [1, ['2^32-1', Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f])]],
      [1, ['6-byte varint', Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0x01])]],
      [1, ['unterminated varint at end', Buffer.from([0x80])]],
      [2, ['random', uvarintBytes(rng.int(1 << 20))]],
    ]);
    if (choice[0] === 'unterminated varint at end') return { bytes: fixSize(Buffer.concat([frame.subarray(0, site.at), choice[1]])), what: `varint@${site.at} cut to 0x80` };
    return { bytes: fixSize(splice(frame, site.at, site.size, choice[1])), what: `${site.role} varint@${site.at} ${old} -> ${choice[0]}` };
  }
  const out = Buffer.from(frame);
  const w = site.width;
  if (w === 8) {
    const v = rng.pick([-1n, 0n, -(2n ** 63n), 2n ** 63n - 1n, rng.int64()]);
    out.writeBigInt64BE(v, site.at);
    return { bytes: out, what: `int64@${site.at} -> ${v}` };
  }
  const bits = w * 8;
  const max = 2 ** (bits - 1) - 1;
  const min = -(2 ** (bits - 1));
  const old = w === 1 ? frame.readInt8(site.at) : w === 2 ? frame.readInt16BE(site.at) : frame.readInt32BE(site.at);
  const v = rng.pick([-1, -2, min, max, old + 1, old - 1, 0, old * 2 + 1, rng.int(2 ** bits) + min].map((x) => Math.min(max, Math.max(min, x))));
  if (w === 1) out.writeInt8(v, site.at);
  else if (w === 2) out.writeInt16BE(v, site.at);
  else out.writeInt32BE(v, site.at);
  return { bytes: out, what: `${site.role} int${bits}@${site.at} ${old} -> ${v}` };
}

function readUvarint(b: Buffer, at: number): number {
  let v = 0;
  let mul = 1;
  for (let i = at; i < b.length && i < at + 5; i++) {
    v += (b[i]! & 0x7f) * mul;
    if ((b[i]! & 0x80) === 0) break;
    mul *= 128;
  }
  return v;
}

/**
 * One structural mutation: a length, count or integer of the encoded message lies. A second mutation of the
 * same frame gets the sites of the first encoding: one that a varint lie moved past the end (the frame cut
 * after an unterminated varint, or shortened) is left out, one it shifted lies at its old offset.
 */
export function mutateStructure(rng: Prng, frame: EncodedFrame): { bytes: Buffer; what: string } {
  const sites = frame.sites.filter((s) => s.at + s.size <= frame.bytes.length);
  if (sites.length === 0) return { bytes: frame.bytes, what: 'no site left to lie at' };
  const lengths = sites.filter((s) => s.role === 'length' || s.role === 'count');
  const pool = lengths.length > 0 && rng.chance(0.7) ? lengths : sites;
  // Header sites (API key, version) are left mostly alone: a wrong key only tests the unknown-key path.
  const body = pool.filter((s) => s.at >= frame.bodyAt);
  const site = rng.pick(body.length > 0 && rng.chance(0.95) ? body : pool);
  return lieAt(rng, frame.bytes, site);
}

/** One blind mutation anywhere after the size prefix (mostly in the body). */
export function mutateBytes(rng: Prng, frame: EncodedFrame): { bytes: Buffer; what: string } {
  const b = frame.bytes;
  const from = rng.chance(0.9) ? frame.bodyAt : 4;
  if (b.length <= from) return { bytes: fixSize(Buffer.concat([b, rng.bytes(4)])), what: 'appended 4 random bytes' };
  const at = rng.range(from, b.length - 1);
  const op = rng.pick(['flip', 'truncate', 'insert', 'delete', 'repeat', 'overwrite'] as const);
  switch (op) {
    case 'flip': {
      const out = Buffer.from(b);
      const n = rng.range(1, 8);
      for (let i = 0; i < n; i++) out[rng.range(from, b.length - 1)] ^= 1 << rng.int(8);
      return { bytes: out, what: `${n} bit flips after byte ${from}` };
    }
    case 'truncate':
      return { bytes: fixSize(Buffer.from(b.subarray(0, at))), what: `truncated to ${at} bytes` };
    case 'insert': {
      const ins = rng.bytes(rng.pick([1, 2, 4, 16, 100]));
      return { bytes: fixSize(splice(b, at, 0, ins)), what: `inserted ${ins.length} random bytes at ${at}` };
    }
    case 'delete': {
      const n = Math.min(b.length - at, rng.range(1, 16));
      return { bytes: fixSize(splice(b, at, n, Buffer.alloc(0))), what: `deleted ${n} bytes at ${at}` };
    }
    case 'repeat': {
      const n = Math.min(b.length - at, rng.range(1, 64));
      const times = rng.pick([2, 10, 100]);
      const rep = Buffer.concat(Array.from({ length: times }, () => b.subarray(at, at + n)));
      return { bytes: fixSize(splice(b, at, n, rep)), what: `repeated ${n} bytes at ${at} ${times} times` };
    }
    case 'overwrite': {
      const out = Buffer.from(b);
      const n = Math.min(b.length - at, rng.range(1, 8));
      out.fill(rng.pick([0x00, 0xff, 0x7f, 0x80]), at, at + n);
      return { bytes: out, what: `overwrote ${n} bytes at ${at}` };
    }
  }
}
