/**
 * What the ZooKeeper metadata store writes in its znodes (layout in ../README.md, *ZooKeeper*):
 *
 * Key znode `/kv/<escaped key>`, one per live key:
 *
 *   ┌──────┬────┬────────┬───────────────┬─────────────┬─────────┬───────┬────────┬─────┬───────┐
 *   │ LLK1 │ v1 │ crc32c │ createRevision│ modRevision │ version │ lease │ keyLen │ key │ value │
 *   │  4   │ 1  │   4    │      8        │      8      │    4    │   8   │   4    │  n  │ rest  │
 *   └──────┴────┴────────┴───────────────┴─────────────┴─────────┴───────┴────────┴─────┴───────┘
 *   crc32c covers every byte after it. Integers big-endian; lease 0 is none.
 *
 * History znode `/history/<revision, 16 digits>`, one per revision (its events, in order):
 *
 *   LLH1 │ v1 │ crc32c │ writer token (8 bytes) │ count u32 │ count × event
 *   event: type u8 (0 put, 1 delete) │ keyLen u32 │ key │ createRevision u64 │ version u32 │ lease u64 │
 *          valueLen u32 │ value │ hasPrev u8 │ [prev createRevision u64 │ modRevision u64 │ version u32 │ lease u64]
 *   A put's new state with its value; a delete's tombstone carries nothing. The previous state is kept
 *   without its value: its value is the one written at prev.modRevision (the live replica has it, a replay
 *   reads that revision's znode).
 *
 * The writer token is random per write: a writer whose answer was lost (ConnectionLoss) reads the revision's
 * history znode back to learn whether its multi was the one applied.
 *
 * A new format is a new magic or version byte; a reader refuses what it does not know (FORMAT error).
 */
import { crc32c } from '../../../protocol/crc32c.js';
import type { StoredEvent, StoredKv } from '../backend.js';
import { MetadataFormatError } from '../errors.js';

const KV_MAGIC = Buffer.from('LLK1');
const HISTORY_MAGIC = Buffer.from('LLH1');
const FORMAT_VERSION = 1;
const EMPTY = Buffer.alloc(0);

/** Bytes of a key znode besides the key and the value. */
export const KV_HEADER_BYTES = 4 + 1 + 4 + 8 + 8 + 4 + 8 + 4;

function seal(magic: Buffer, body: Buffer): Buffer {
  const out = Buffer.allocUnsafe(9 + body.length);
  magic.copy(out, 0);
  out.writeUInt8(FORMAT_VERSION, 4);
  out.writeUInt32BE(crc32c(body) >>> 0, 5);
  body.copy(out, 9);
  return out;
}

function open(magic: Buffer, data: Buffer, what: string): Buffer {
  if (data.length < 9 || !data.subarray(0, 4).equals(magic) || data.readUInt8(4) !== FORMAT_VERSION) {
    throw new MetadataFormatError(`${what}: not a Ledgerline znode of a known format`, { path: what });
  }
  const body = data.subarray(9);
  if ((crc32c(body) >>> 0) !== data.readUInt32BE(5)) throw new MetadataFormatError(`${what}: checksum mismatch`, { path: what });
  return body;
}

export function encodeKv(kv: StoredKv): Buffer {
  const key = Buffer.from(kv.key, 'utf8');
  const body = Buffer.allocUnsafe(32 + key.length + kv.value.length);
  body.writeBigUInt64BE(BigInt(kv.createRevision), 0);
  body.writeBigUInt64BE(BigInt(kv.modRevision), 8);
  body.writeUInt32BE(kv.version, 16);
  body.writeBigUInt64BE(BigInt(kv.lease), 20);
  body.writeUInt32BE(key.length, 28);
  key.copy(body, 32);
  kv.value.copy(body, 32 + key.length);
  return seal(KV_MAGIC, body);
}

export function decodeKv(data: Buffer, path: string): StoredKv {
  const body = open(KV_MAGIC, data, path);
  if (body.length < 32) throw new MetadataFormatError(`${path}: truncated key znode`, { path });
  const keyLen = body.readUInt32BE(28);
  if (32 + keyLen > body.length) throw new MetadataFormatError(`${path}: truncated key znode`, { path });
  return {
    createRevision: Number(body.readBigUInt64BE(0)),
    modRevision: Number(body.readBigUInt64BE(8)),
    version: body.readUInt32BE(16),
    lease: Number(body.readBigUInt64BE(20)),
    key: body.subarray(32, 32 + keyLen).toString('utf8'),
    value: Buffer.from(body.subarray(32 + keyLen)),
  };
}

export const TOKEN_BYTES = 8;

export function encodeHistory(events: readonly StoredEvent[], token: Buffer): Buffer {
  const parts: Buffer[] = [token];
  const count = Buffer.allocUnsafe(4);
  count.writeUInt32BE(events.length, 0);
  parts.push(count);
  for (const e of events) {
    const key = Buffer.from(e.kv.key, 'utf8');
    const head = Buffer.allocUnsafe(5);
    head.writeUInt8(e.type === 'put' ? 0 : 1, 0);
    head.writeUInt32BE(key.length, 1);
    const state = Buffer.allocUnsafe(24);
    state.writeBigUInt64BE(BigInt(e.kv.createRevision), 0);
    state.writeUInt32BE(e.kv.version, 8);
    state.writeBigUInt64BE(BigInt(e.kv.lease), 12);
    state.writeUInt32BE(e.kv.value.length, 20);
    const prev = Buffer.alloc(e.prev === null ? 1 : 29);
    if (e.prev !== null) {
      prev.writeUInt8(1, 0);
      prev.writeBigUInt64BE(BigInt(e.prev.createRevision), 1);
      prev.writeBigUInt64BE(BigInt(e.prev.modRevision), 9);
      prev.writeUInt32BE(e.prev.version, 17);
      prev.writeBigUInt64BE(BigInt(e.prev.lease), 21);
    }
    parts.push(head, key, state, e.kv.value, prev);
  }
  return seal(HISTORY_MAGIC, Buffer.concat(parts));
}

/** A history event as stored: `prev` has an empty value (see the top of the file). */
export function decodeHistory(data: Buffer, revision: number, path: string): { events: StoredEvent[]; token: Buffer } {
  const all = open(HISTORY_MAGIC, data, path);
  if (all.length < TOKEN_BYTES) throw new MetadataFormatError(`${path}: truncated history znode`, { path });
  const token = Buffer.from(all.subarray(0, TOKEN_BYTES));
  const body = all.subarray(TOKEN_BYTES);
  const fail = (): never => {
    throw new MetadataFormatError(`${path}: truncated history znode`, { path });
  };
  if (body.length < 4) fail();
  const count = body.readUInt32BE(0);
  const events: StoredEvent[] = [];
  let at = 4;
  for (let seq = 0; seq < count; seq++) {
    if (at + 5 > body.length) fail();
    const type = body.readUInt8(at) === 0 ? 'put' : 'delete';
    const keyLen = body.readUInt32BE(at + 1);
    at += 5;
    if (at + keyLen + 24 > body.length) fail();
    const key = body.subarray(at, at + keyLen).toString('utf8');
    at += keyLen;
    const createRevision = Number(body.readBigUInt64BE(at));
    const version = body.readUInt32BE(at + 8);
    const lease = Number(body.readBigUInt64BE(at + 12));
    const valueLen = body.readUInt32BE(at + 20);
    at += 24;
    if (at + valueLen + 1 > body.length) fail();
    const value = valueLen === 0 ? EMPTY : Buffer.from(body.subarray(at, at + valueLen));
    at += valueLen;
    let prev: StoredKv | null = null;
    if (body.readUInt8(at) === 1) {
      if (at + 29 > body.length) fail();
      prev = {
        key,
        value: EMPTY,
        createRevision: Number(body.readBigUInt64BE(at + 1)),
        modRevision: Number(body.readBigUInt64BE(at + 9)),
        version: body.readUInt32BE(at + 17),
        lease: Number(body.readBigUInt64BE(at + 21)),
      };
      at += 29;
    } else at += 1;
    events.push({ revision, seq, type, kv: { key, value, createRevision, modRevision: revision, version, lease }, prev });
  }
  return { events, token };
}

/**
 * A key as one znode name: its UTF-8 bytes with every byte outside [A-Za-z0-9_-] written %XX (so `/`, `.`,
 * control, surrogate-range and private-use characters, which ZooKeeper refuses in names, never appear).
 * Reversible and injective; names are not in key order (the store sorts keys itself).
 */
export function escapeKey(key: string): string {
  const bytes = Buffer.from(key, 'utf8');
  let out = '';
  for (const b of bytes) {
    const safe = (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || b === 0x5f || b === 0x2d;
    out += safe ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

export function unescapeKey(name: string): string {
  return Buffer.from(
    name.replace(/%([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))),
    'latin1',
  ).toString('utf8');
}

export function historyName(revision: number): string {
  return String(revision).padStart(16, '0');
}
