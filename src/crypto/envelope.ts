/**
 * The end-to-end envelope, version 1: the binary value of a record's `ledgerline.e2e` header. The full
 * specification, with the cryptography around it, is src/crypto/README.md; this module only lays out and
 * parses bytes, holds no key and does no cryptography, so the broker's check (check.ts) uses it as is.
 *
 *   offset size  field
 *   0      1     version            0x01
 *   1      1     cipher             0x01 = AES-256-GCM (96-bit nonce, 128-bit tag)
 *   2      1     flags              0x01 KEYS       wrapped data keys follow (else: a reference to a data
 *                                                   key announced by an earlier record)
 *                                   0x02 PSEUDONYM  the record key is an HMAC-SHA256 pseudonym; the original
 *                                                   key travels sealed below
 *                                   0x04 HEADERS    some headers travel sealed below
 *                                   other bits must be 0
 *   3      16    data key id        random, names the data key (caches, references)
 *   19     12    nonce base         random per record
 *   31     ...   if KEYS:      u8 n (1..255), then n x
 *                                { u8 len (1..255), recipient key id (UTF-8),
 *                                  u8 wrap (0x01 RSA-OAEP-256, 0x02 X25519-HKDF-SHA256-A256GCM),
 *                                  u16 len (1..65535), wrapped data key }
 *          ...   if PSEUDONYM: u8 len (1..255), pseudonym key id (UTF-8)
 *          ----- end of the head: the AAD of every sealed part covers bytes [0, head end) -----
 *          ...   if PSEUDONYM: u32 len, sealed original key   (section 1)
 *          ...   if HEADERS:   u32 len, sealed headers        (section 2)
 *          end   nothing may follow
 *
 * Integers are big-endian and unsigned. A sealed part is AES-GCM ciphertext followed by its 16-byte tag,
 * so every length of a sealed part is at least 16. The record's value (section 0) is sealed the same way
 * and stays the record's value; a null value (a tombstone) stays null.
 */

/** The record header that carries the envelope. */
export const ENVELOPE_HEADER = 'ledgerline.e2e';
export const ENVELOPE_VERSION = 1;
export const CIPHER_AES_256_GCM = 1;

export const FLAG_KEYS = 0x01;
export const FLAG_PSEUDONYM = 0x02;
export const FLAG_HEADERS = 0x04;
const KNOWN_FLAGS = FLAG_KEYS | FLAG_PSEUDONYM | FLAG_HEADERS;

export const DATA_KEY_ID_BYTES = 16;
export const NONCE_BYTES = 12;
export const TAG_BYTES = 16;
export const DATA_KEY_BYTES = 32;
/** Where the variable part of the head starts. */
const FIXED_HEAD_BYTES = 3 + DATA_KEY_ID_BYTES + NONCE_BYTES;

export enum WrapAlgorithm {
  RSA_OAEP_256 = 1,
  X25519_HKDF_SHA256_A256GCM = 2,
}

/** The sections a data key seals, which pick the nonce and the AAD (README, "Sealing"). */
export enum Section {
  VALUE = 0,
  KEY = 1,
  HEADERS = 2,
}

export interface WrappedKey {
  /** The recipient's key id. */
  readonly keyId: string;
  readonly algorithm: WrapAlgorithm;
  readonly wrapped: Buffer;
}

export interface Envelope {
  readonly version: number;
  readonly cipher: number;
  readonly dataKeyId: Buffer;
  readonly nonceBase: Buffer;
  /** Empty when the envelope references a data key announced earlier. */
  readonly wrappedKeys: readonly WrappedKey[];
  /** The key id of the pseudonym secret, when the record key is a pseudonym. */
  readonly pseudonymKeyId: string | null;
  readonly sealedKey: Buffer | null;
  readonly sealedHeaders: Buffer | null;
  /** The head's bytes: the part of the header value every sealed part's AAD covers. */
  readonly head: Buffer;
}

/** A header value that is not a well-formed envelope; the message says where and why. */
export class EnvelopeFormatError extends Error {
  override readonly name = 'EnvelopeFormatError';
}

/** The head of an envelope, as a producer writes it before sealing. */
export interface EnvelopeHead {
  readonly dataKeyId: Buffer;
  readonly nonceBase: Buffer;
  readonly wrappedKeys: readonly WrappedKey[];
  readonly pseudonymKeyId: string | null;
  /** Whether sealed headers follow (sets FLAG_HEADERS). */
  readonly sealsHeaders: boolean;
}

function idBytes(what: string, id: string): Buffer {
  const b = Buffer.from(id, 'utf8');
  if (b.length < 1 || b.length > 255) throw new RangeError(`${what} must be 1 to 255 bytes of UTF-8, got ${b.length}`);
  return b;
}

/** Lays out an envelope's head. */
export function encodeHead(h: EnvelopeHead): Buffer {
  if (h.dataKeyId.length !== DATA_KEY_ID_BYTES) throw new RangeError(`data key id must be ${DATA_KEY_ID_BYTES} bytes`);
  if (h.nonceBase.length !== NONCE_BYTES) throw new RangeError(`nonce base must be ${NONCE_BYTES} bytes`);
  if (h.wrappedKeys.length > 255) throw new RangeError('at most 255 recipients');
  const parts: Buffer[] = [];
  let flags = 0;
  if (h.wrappedKeys.length > 0) {
    flags |= FLAG_KEYS;
    parts.push(Buffer.of(h.wrappedKeys.length));
    for (const w of h.wrappedKeys) {
      const id = idBytes('recipient key id', w.keyId);
      if (w.wrapped.length < 1 || w.wrapped.length > 0xffff) throw new RangeError('a wrapped key must be 1 to 65535 bytes');
      const len = Buffer.alloc(2);
      len.writeUInt16BE(w.wrapped.length);
      parts.push(Buffer.of(id.length), id, Buffer.of(w.algorithm), len, w.wrapped);
    }
  }
  if (h.pseudonymKeyId !== null) {
    flags |= FLAG_PSEUDONYM;
    const id = idBytes('pseudonym key id', h.pseudonymKeyId);
    parts.push(Buffer.of(id.length), id);
  }
  if (h.sealsHeaders) flags |= FLAG_HEADERS;
  return Buffer.concat([Buffer.of(ENVELOPE_VERSION, CIPHER_AES_256_GCM, flags), h.dataKeyId, h.nonceBase, ...parts]);
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}

/** The whole header value: the head, then the sealed parts its flags announce. */
export function encodeEnvelope(head: Buffer, sealedKey: Buffer | null, sealedHeaders: Buffer | null): Buffer {
  const parts = [head];
  if (sealedKey !== null) parts.push(u32(sealedKey.length), sealedKey);
  if (sealedHeaders !== null) parts.push(u32(sealedHeaders.length), sealedHeaders);
  return Buffer.concat(parts);
}

/**
 * Parses a header value, checking every length against the bytes present: never reads past the value,
 * never allocates more than it holds (sub-buffers share its memory). Throws EnvelopeFormatError.
 */
export function decodeEnvelope(value: Buffer): Envelope {
  let pos = 0;
  const need = (n: number, what: string): void => {
    if (value.length - pos < n) throw new EnvelopeFormatError(`envelope ends inside ${what} (at byte ${pos}, ${value.length} bytes in all)`);
  };
  need(FIXED_HEAD_BYTES, 'the fixed head');
  const version = value[0];
  if (version !== ENVELOPE_VERSION) throw new EnvelopeFormatError(`unknown envelope version ${version}`);
  const cipher = value[1];
  if (cipher !== CIPHER_AES_256_GCM) throw new EnvelopeFormatError(`unknown cipher ${cipher}`);
  const flags = value[2];
  if ((flags & ~KNOWN_FLAGS) !== 0) throw new EnvelopeFormatError(`unknown flags 0x${flags.toString(16)}`);
  const dataKeyId = value.subarray(3, 3 + DATA_KEY_ID_BYTES);
  const nonceBase = value.subarray(3 + DATA_KEY_ID_BYTES, FIXED_HEAD_BYTES);
  pos = FIXED_HEAD_BYTES;
  const id = (what: string): string => {
    need(1, `the length of ${what}`);
    const len = value[pos++];
    if (len === 0) throw new EnvelopeFormatError(`empty ${what}`);
    need(len, what);
    const s = value.toString('utf8', pos, pos + len);
    pos += len;
    return s;
  };
  const wrappedKeys: WrappedKey[] = [];
  if ((flags & FLAG_KEYS) !== 0) {
    need(1, 'the recipient count');
    const n = value[pos++];
    if (n === 0) throw new EnvelopeFormatError('KEYS is set but no recipient follows');
    for (let i = 0; i < n; i++) {
      const keyId = id(`recipient ${i}'s key id`);
      need(3, `recipient ${i}'s wrap algorithm and length`);
      const algorithm = value[pos];
      if (algorithm !== WrapAlgorithm.RSA_OAEP_256 && algorithm !== WrapAlgorithm.X25519_HKDF_SHA256_A256GCM) {
        throw new EnvelopeFormatError(`recipient ${i} has unknown wrap algorithm ${algorithm}`);
      }
      const len = value.readUInt16BE(pos + 1);
      pos += 3;
      if (len === 0) throw new EnvelopeFormatError(`recipient ${i}'s wrapped key is empty`);
      need(len, `recipient ${i}'s wrapped key`);
      wrappedKeys.push({ keyId, algorithm, wrapped: value.subarray(pos, pos + len) });
      pos += len;
    }
  }
  const pseudonymKeyId = (flags & FLAG_PSEUDONYM) !== 0 ? id('the pseudonym key id') : null;
  const head = value.subarray(0, pos);
  const sealed = (what: string): Buffer => {
    need(4, `the length of ${what}`);
    const len = value.readUInt32BE(pos);
    pos += 4;
    if (len < TAG_BYTES) throw new EnvelopeFormatError(`${what} is ${len} bytes, shorter than its ${TAG_BYTES}-byte tag`);
    need(len, what);
    const b = value.subarray(pos, pos + len);
    pos += len;
    return b;
  };
  const sealedKey = pseudonymKeyId !== null ? sealed('the sealed key') : null;
  const sealedHeaders = (flags & FLAG_HEADERS) !== 0 ? sealed('the sealed headers') : null;
  if (pos !== value.length) throw new EnvelopeFormatError(`${value.length - pos} bytes follow the envelope`);
  return { version, cipher, dataKeyId, nonceBase, wrappedKeys, pseudonymKeyId, sealedKey, sealedHeaders, head };
}

/** Past a length-prefixed (u8) id at `pos`, or why not. */
function skipId(v: Buffer, pos: number, end: number, what: string): number | string {
  if (pos >= end) return `envelope ends inside the length of ${what} (at byte ${pos}, ${end} bytes in all)`;
  const len = v[pos]!;
  if (len === 0) return `empty ${what}`;
  if (end - pos - 1 < len) return `envelope ends inside ${what} (at byte ${pos + 1}, ${end} bytes in all)`;
  return pos + 1 + len;
}

/** Past a sealed part (u32 length) at `pos`, or why not. */
function skipSealed(v: Buffer, pos: number, end: number, what: string): number | string {
  if (end - pos < 4) return `envelope ends inside the length of ${what} (at byte ${pos}, ${end} bytes in all)`;
  const len = v.readUInt32BE(pos);
  if (len < TAG_BYTES) return `${what} is ${len} bytes, shorter than its ${TAG_BYTES}-byte tag`;
  if (end - pos - 4 < len) return `envelope ends inside ${what} (at byte ${pos + 4}, ${end} bytes in all)`;
  return pos + 4 + len;
}

/**
 * Why `value` is not a well-formed envelope, or null: decodeEnvelope's every check, without building the
 * envelope (no objects, no strings, no closures per record), for the broker's check of each produced record
 * (check.ts). Positions in messages count from the start of the envelope.
 */
export function envelopeFormatError(value: Buffer): string | null {
  const n = value.length;
  if (n < FIXED_HEAD_BYTES) return `envelope ends inside the fixed head (at byte 0, ${n} bytes in all)`;
  if (value[0] !== ENVELOPE_VERSION) return `unknown envelope version ${value[0]}`;
  if (value[1] !== CIPHER_AES_256_GCM) return `unknown cipher ${value[1]}`;
  const flags = value[2]!;
  if ((flags & ~KNOWN_FLAGS) !== 0) return `unknown flags 0x${flags.toString(16)}`;
  let pos: number | string = FIXED_HEAD_BYTES;
  if ((flags & FLAG_KEYS) !== 0) {
    if (pos >= n) return `envelope ends inside the recipient count (at byte ${pos}, ${n} bytes in all)`;
    const count = value[pos++]!;
    if (count === 0) return 'KEYS is set but no recipient follows';
    for (let i = 0; i < count; i++) {
      pos = skipId(value, pos, n, `recipient ${i}'s key id`);
      if (typeof pos === 'string') return pos;
      if (n - pos < 3) return `envelope ends inside recipient ${i}'s wrap algorithm and length (at byte ${pos}, ${n} bytes in all)`;
      const algorithm = value[pos]!;
      if (algorithm !== WrapAlgorithm.RSA_OAEP_256 && algorithm !== WrapAlgorithm.X25519_HKDF_SHA256_A256GCM) return `recipient ${i} has unknown wrap algorithm ${algorithm}`;
      const len = value.readUInt16BE(pos + 1);
      pos += 3;
      if (len === 0) return `recipient ${i}'s wrapped key is empty`;
      if (n - pos < len) return `envelope ends inside recipient ${i}'s wrapped key (at byte ${pos}, ${n} bytes in all)`;
      pos += len;
    }
  }
  const pseudonym = (flags & FLAG_PSEUDONYM) !== 0;
  if (pseudonym) {
    pos = skipId(value, pos, n, 'the pseudonym key id');
    if (typeof pos === 'string') return pos;
    pos = skipSealed(value, pos, n, 'the sealed key');
    if (typeof pos === 'string') return pos;
  }
  if ((flags & FLAG_HEADERS) !== 0) {
    pos = skipSealed(value, pos, n, 'the sealed headers');
    if (typeof pos === 'string') return pos;
  }
  return pos === n ? null : `${n - pos} bytes follow the envelope`;
}

/** A header as the sealed-headers section holds it. */
export interface SealedHeader {
  readonly key: string;
  readonly value: Buffer | null;
}

/**
 * The plaintext of the sealed-headers section:
 *
 *   u16 count, then count x { u16 name length, name (UTF-8), i32 value length (-1 = null), value }
 */
export function encodeHeaderList(headers: readonly SealedHeader[]): Buffer {
  if (headers.length > 0xffff) throw new RangeError('at most 65535 sealed headers');
  const parts: Buffer[] = [];
  const count = Buffer.alloc(2);
  count.writeUInt16BE(headers.length);
  parts.push(count);
  for (const h of headers) {
    const name = Buffer.from(h.key, 'utf8');
    if (name.length > 0xffff) throw new RangeError('a sealed header name must be at most 65535 bytes');
    const lens = Buffer.alloc(6);
    lens.writeUInt16BE(name.length, 0);
    lens.writeInt32BE(h.value === null ? -1 : h.value.length, 2);
    parts.push(lens.subarray(0, 2), name, lens.subarray(2));
    if (h.value !== null) parts.push(h.value);
  }
  return Buffer.concat(parts);
}

/** Parses what encodeHeaderList wrote (after authentication, so a failure here is a producer's bug). */
export function decodeHeaderList(b: Buffer): SealedHeader[] {
  let pos = 0;
  const need = (n: number): void => {
    if (b.length - pos < n) throw new EnvelopeFormatError('sealed header list ends early');
  };
  need(2);
  const count = b.readUInt16BE(0);
  pos = 2;
  const out: SealedHeader[] = [];
  for (let i = 0; i < count; i++) {
    need(2);
    const nameLen = b.readUInt16BE(pos);
    pos += 2;
    need(nameLen + 4);
    const key = b.toString('utf8', pos, pos + nameLen);
    pos += nameLen;
    const valueLen = b.readInt32BE(pos);
    pos += 4;
    if (valueLen < -1) throw new EnvelopeFormatError(`sealed header ${i} has length ${valueLen}`);
    if (valueLen === -1) {
      out.push({ key, value: null });
      continue;
    }
    need(valueLen);
    out.push({ key, value: Buffer.from(b.subarray(pos, pos + valueLen)) });
    pos += valueLen;
  }
  if (pos !== b.length) throw new EnvelopeFormatError('bytes follow the sealed header list');
  return out;
}
