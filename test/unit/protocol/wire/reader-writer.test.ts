import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DecodeError } from '../../../../protocol/errors.js';
import { Reader } from '../../../../protocol/wire/reader.js';
import { Writer } from '../../../../protocol/wire/writer.js';
import { randomUuid, uuidFromBytes, ZERO_UUID } from '../../../../protocol/wire/uuid.js';

describe('Reader', () => {
  it('fails sticky on a read past the end and reports the offset once', () => {
    const r = new Reader(Buffer.from([0, 1, 2]));
    expect(r.int16()).toBe(1);
    expect(r.int32()).toBe(0);
    expect(r.ok).toBe(false);
    expect(r.int8()).toBe(0);
    expect(() => r.complete()).toThrow(DecodeError);
    try {
      r.complete();
    } catch (e) {
      expect((e as DecodeError).offset).toBe(2);
      expect((e as DecodeError).code).toBe('LL_ERR_DECODE');
    }
  });

  it('rejects trailing bytes on complete()', () => {
    const r = new Reader(Buffer.from([0, 0, 0, 1, 9]));
    r.int32();
    expect(() => r.complete()).toThrow(/1 unexpected trailing bytes at byte 4/);
  });

  it('rejects a length prefix larger than the bytes left before allocating', () => {
    const w = new Writer();
    w.int32(0x7fffffff);
    const r = new Reader(w.toBuffer());
    expect(r.bytes().length).toBe(0);
    expect(r.ok).toBe(false);
    const a = new Reader(w.toBuffer());
    expect(a.arrayLength(1)).toBe(0);
    expect(() => a.check()).toThrow(/cannot fit/);
  });

  it('rejects varints longer than 5 bytes and a 5th byte above 0x0f', () => {
    expect(new Reader(Buffer.from([0xff, 0xff, 0xff, 0xff, 0x10])).uvarint()).toBe(0);
    const r = new Reader(Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f]));
    expect(r.uvarint()).toBe(0xffffffff);
    expect(r.ok).toBe(true);
  });

  it('returns byte fields as slices of the input, not copies', () => {
    const buf = Buffer.from([0, 0, 0, 3, 7, 8, 9]);
    const b = new Reader(buf).bytes();
    buf[4] = 42;
    expect(b[0]).toBe(42);
  });

  it('decodes a null compact string as null and an empty one as empty', () => {
    const r = new Reader(Buffer.from([0, 1]));
    expect(r.compactNullableString()).toBeNull();
    expect(r.compactNullableString()).toBe('');
  });
});

describe('Writer and Reader agree', () => {
  it('round-trips every primitive', () => {
    fc.assert(
      fc.property(
        fc.record({
          i8: fc.integer({ min: -128, max: 127 }),
          i16: fc.integer({ min: -32768, max: 32767 }),
          u16: fc.integer({ min: 0, max: 65535 }),
          i32: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
          u32: fc.integer({ min: 0, max: 2 ** 32 - 1 }),
          i64: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
          f64: fc.double({ noNaN: true }),
          vi: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
          vl: fc.integer({ min: -(2 ** 52), max: 2 ** 52 - 1 }),
          s: fc.string({ unit: 'grapheme', maxLength: 40 }),
          ns: fc.option(fc.string({ maxLength: 10 }), { nil: null }),
          b: fc.uint8Array({ maxLength: 3000 }).map((a) => Buffer.from(a)),
          nb: fc.option(fc.uint8Array({ maxLength: 10 }).map((a) => Buffer.from(a)), { nil: null }),
          id: fc.uint8Array({ minLength: 16, maxLength: 16 }).map((a) => uuidFromBytes(Buffer.from(a))),
        }),
        (v) => {
          const w = new Writer(8);
          w.int8(v.i8);
          w.int16(v.i16);
          w.uint16(v.u16);
          w.int32(v.i32);
          w.uint32(v.u32);
          w.int64(v.i64);
          w.float64(v.f64);
          w.varint(v.vi);
          w.varlong(v.vl);
          w.uvarint(v.u32);
          w.string(v.s);
          w.compactString(v.s);
          w.nullableString(v.ns);
          w.compactNullableString(v.ns);
          w.bytes(v.b);
          w.compactBytes(v.b);
          w.nullableBytes(v.nb);
          w.compactNullableBytes(v.nb);
          w.uuid(v.id);
          const buf = w.toBuffer();
          expect(buf.length).toBe(w.length);
          const r = new Reader(buf);
          expect(r.int8()).toBe(v.i8);
          expect(r.int16()).toBe(v.i16);
          expect(r.uint16()).toBe(v.u16);
          expect(r.int32()).toBe(v.i32);
          expect(r.uint32()).toBe(v.u32);
          expect(r.int64()).toBe(v.i64);
          expect(r.float64()).toBe(v.f64);
          expect(r.varint()).toBe(v.vi);
          expect(r.varlong()).toBe(v.vl);
          expect(r.uvarint()).toBe(v.u32);
          expect(r.string()).toBe(v.s);
          expect(r.compactString()).toBe(v.s);
          expect(r.nullableString()).toBe(v.ns);
          expect(r.compactNullableString()).toBe(v.ns);
          expect(r.bytes().equals(v.b)).toBe(true);
          expect(r.compactBytes().equals(v.b)).toBe(true);
          const nb = r.nullableBytes();
          expect(nb === null ? null : Buffer.from(nb)).toEqual(v.nb);
          const cnb = r.compactNullableBytes();
          expect(cnb === null ? null : Buffer.from(cnb)).toEqual(v.nb);
          expect(r.uuid()).toBe(v.id);
          r.complete();
        },
      ),
    );
  });

  it('references large byte fields instead of copying them', () => {
    const big = Buffer.alloc(64 * 1024, 7);
    const w = new Writer();
    w.int32(1);
    w.bytes(big);
    w.int16(2);
    const chunks = w.chunks();
    expect(chunks.some((c) => c === big)).toBe(true);
    expect(Buffer.concat(chunks).length).toBe(4 + 4 + big.length + 2);
  });

  it('encodes zigzag varints as Kafka does', () => {
    const w = new Writer();
    for (const v of [0, -1, 1, -2, 63, -64, 64]) w.varint(v);
    expect(w.toBuffer()).toEqual(Buffer.from([0, 1, 2, 3, 0x7e, 0x7f, 0x80, 0x01]));
  });

  it('writes exactly the varlongs it reads back: -2^52 to 2^52 - 1, whose zigzag form is a safe integer', () => {
    const w = new Writer();
    for (const v of [-(2 ** 52), 2 ** 52 - 1]) w.varlong(v);
    const r = new Reader(w.toBuffer());
    expect([r.varlong(), r.varlong()]).toEqual([-(2 ** 52), 2 ** 52 - 1]);
    r.complete();
    // 2^52 zigzags to 2^53, which a double cannot tell from 2^53 + 1: refused on both sides.
    expect(() => new Writer().varlong(2 ** 52)).toThrow(/outside/);
    const beyond = new Reader(Buffer.from([0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10]));
    beyond.varlong();
    expect(beyond.ok).toBe(false);
  });
});

describe('uuid', () => {
  it('uses Kafka string form and never generates the zero uuid', () => {
    expect(uuidFromBytes(Buffer.alloc(16))).toBe(ZERO_UUID);
    for (let i = 0; i < 100; i++) {
      const u = randomUuid();
      expect(u).toHaveLength(22);
      expect(u.startsWith('-')).toBe(false);
    }
  });
});
