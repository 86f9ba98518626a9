import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FrameReader, FrameSizeError } from '../../../src/client/frame-reader.js';

function frame(body: Buffer): Buffer {
  const out = Buffer.alloc(4 + body.length);
  out.writeInt32BE(body.length, 0);
  body.copy(out, 4);
  return out;
}

function collect(reader: FrameReader, chunks: Buffer[]): Buffer[] {
  const out: Buffer[] = [];
  for (const c of chunks) reader.push(c, (b) => out.push(Buffer.from(b)));
  return out;
}

describe('FrameReader', () => {
  it('hands out a frame that lies inside one chunk as a slice of that chunk', () => {
    const chunk = Buffer.concat([frame(Buffer.from('hello')), frame(Buffer.from('world!'))]);
    const seen: Buffer[] = [];
    new FrameReader({ maxFrameBytes: 1024 }).push(chunk, (b) => seen.push(b));
    expect(seen.map((b) => b.toString())).toEqual(['hello', 'world!']);
    // Same memory as the chunk: no copy was made.
    expect(seen[0]!.buffer).toBe(chunk.buffer);
    expect(seen[0]!.byteOffset).toBe(chunk.byteOffset + 4);
  });

  it('joins a frame delivered one byte at a time, including its size prefix', () => {
    const body = Buffer.from('a frame split into single bytes');
    const bytes = [...frame(body)].map((b) => Buffer.from([b]));
    const reader = new FrameReader({ maxFrameBytes: 1024 });
    const out = collect(reader, bytes);
    expect(out).toEqual([body]);
    expect(reader.pending).toBe(0);
  });

  it('returns a zero-length frame', () => {
    expect(collect(new FrameReader({ maxFrameBytes: 8 }), [frame(Buffer.alloc(0))])).toEqual([Buffer.alloc(0)]);
  });

  it('keeps the partial tail of a chunk for the next one', () => {
    const a = frame(Buffer.from('first'));
    const b = frame(Buffer.from('second'));
    const joined = Buffer.concat([a, b]);
    const reader = new FrameReader({ maxFrameBytes: 1024 });
    const out = collect(reader, [joined.subarray(0, a.length + 6), joined.subarray(a.length + 6)]);
    expect(out.map((x) => x.toString())).toEqual(['first', 'second']);
  });

  it('rejects a frame size above the limit before buffering its body', () => {
    const reader = new FrameReader({ maxFrameBytes: 100 });
    const prefix = Buffer.alloc(4);
    prefix.writeInt32BE(101, 0);
    expect(() => reader.push(prefix, () => undefined)).toThrow(FrameSizeError);
  });

  it('rejects a negative frame size', () => {
    const prefix = Buffer.alloc(4);
    prefix.writeInt32BE(-1, 0);
    expect(() => new FrameReader({ maxFrameBytes: 100 }).push(prefix, () => undefined)).toThrow(/negative frame size/);
  });

  it('yields the same frames whatever the chunk boundaries (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 12 }),
        fc.array(fc.integer({ min: 1, max: 97 }), { minLength: 1, maxLength: 40 }),
        (bodies, cuts) => {
          const stream = Buffer.concat(bodies.map((b) => frame(Buffer.from(b))));
          const chunks: Buffer[] = [];
          let pos = 0;
          for (let i = 0; pos < stream.length; i++) {
            const n = cuts[i % cuts.length]!;
            chunks.push(stream.subarray(pos, pos + n));
            pos += n;
          }
          const reader = new FrameReader({ maxFrameBytes: 1000 });
          expect(collect(reader, chunks)).toEqual(bodies.map((b) => Buffer.from(b)));
          expect(reader.pending).toBe(0);
        },
      ),
    );
  });
});
