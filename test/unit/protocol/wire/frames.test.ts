import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../../protocol/error-codes.js';
import { kafkaErrorOf } from '../../../../protocol/errors.js';
import { FrameSplitter, FrameTooLargeError } from '../../../../protocol/wire/frames.js';

function framed(body: Buffer): Buffer {
  const out = Buffer.alloc(4 + body.length);
  out.writeInt32BE(body.length, 0);
  body.copy(out, 4);
  return out;
}

function body(n: number, seed: number): Buffer {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + seed) & 0xff;
  return b;
}

describe('FrameSplitter', () => {
  it('returns a frame that lies inside one chunk as a view of that chunk, without copying', () => {
    const chunk = Buffer.concat([framed(body(10, 1)), framed(body(20, 2)), framed(body(0, 3))]);
    const frames = new FrameSplitter({ maxFrameBytes: 1024 }).push(chunk);
    expect(frames.map((f) => f.length)).toEqual([10, 20, 0]);
    expect(frames[0]!.buffer).toBe(chunk.buffer);
    expect(frames[0]!.byteOffset).toBe(chunk.byteOffset + 4);
    expect(frames[1]!.byteOffset).toBe(chunk.byteOffset + 18);
    expect(frames[1]!.equals(body(20, 2))).toBe(true);
  });

  it('joins a frame that spans chunks once, when its last byte arrives', () => {
    const d = new FrameSplitter({ maxFrameBytes: 1 << 20 });
    const whole = framed(body(1000, 7));
    const parts = [whole.subarray(0, 2), whole.subarray(2, 300), whole.subarray(300, 999), whole.subarray(999)];
    expect(d.push(parts[0]!)).toEqual([]);
    expect(d.push(parts[1]!)).toEqual([]);
    expect(d.push(parts[2]!)).toEqual([]);
    expect(d.buffered).toBe(999 - 4); // the size prefix has been consumed
    const [frame] = d.push(parts[3]!);
    expect(frame!.equals(body(1000, 7))).toBe(true);
    // One copy into a buffer of exactly the frame's size, not a view of any chunk.
    expect(frame!.byteLength).toBe(1000);
    for (const p of parts) expect(frame!.buffer === p.buffer).toBe(false);
    expect(d.buffered).toBe(0);
  });

  it('assembles a size prefix split across chunks', () => {
    const d = new FrameSplitter({ maxFrameBytes: 1024 });
    const whole = framed(body(5, 9));
    expect(d.push(whole.subarray(0, 1))).toEqual([]);
    expect(d.push(whole.subarray(1, 3))).toEqual([]);
    expect(d.push(whole.subarray(3, 6))).toEqual([]);
    expect(d.push(whole.subarray(6))).toEqual([body(5, 9)]);
  });

  it('joins a frame delivered one byte at a time, its size prefix included', () => {
    const d = new FrameSplitter({ maxFrameBytes: 1024 });
    const whole = framed(body(40, 5));
    const out: Buffer[] = [];
    for (let i = 0; i < whole.length; i++) out.push(...d.push(whole.subarray(i, i + 1)));
    expect(out).toEqual([body(40, 5)]);
    expect(d.buffered).toBe(0);
  });

  it('refuses a size over the limit whose prefix is split across chunks, before any body byte arrives', () => {
    const d = new FrameSplitter({ maxFrameBytes: 1000, limitName: 'socket.request.max.bytes' });
    const prefix = Buffer.alloc(4);
    prefix.writeInt32BE(1001, 0);
    expect(d.push(prefix.subarray(0, 3))).toEqual([]);
    expect(() => d.push(prefix.subarray(3))).toThrow('frame of 1001 bytes exceeds socket.request.max.bytes 1000');
  });

  it('reports a bad size as a coded error that maps to INVALID_REQUEST', () => {
    const prefix = Buffer.alloc(4);
    prefix.writeInt32BE(-7, 0);
    let caught: unknown;
    try {
      new FrameSplitter({ maxFrameBytes: 10 }).push(prefix);
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(FrameTooLargeError);
    expect(caught).toMatchObject({ code: 'LL_ERR_FRAME_SIZE', size: -7, max: 10, message: 'negative frame size -7' });
    expect(kafkaErrorOf(caught, ErrorCode.UNKNOWN_SERVER_ERROR)).toBe(ErrorCode.INVALID_REQUEST);
  });

  it('returns an empty frame that ends exactly where the chunk ends', () => {
    const d = new FrameSplitter({ maxFrameBytes: 1024 });
    expect(d.push(Buffer.concat([framed(body(3, 1)), framed(Buffer.alloc(0))]))).toEqual([body(3, 1), Buffer.alloc(0)]);
    expect(d.push(framed(Buffer.alloc(0)))).toEqual([Buffer.alloc(0)]);
    expect(d.buffered).toBe(0);
  });

  it('keeps the tail of a chunk for the next frame', () => {
    const d = new FrameSplitter({ maxFrameBytes: 1024 });
    const a = framed(body(8, 1));
    const b = framed(body(12, 2));
    const stream = Buffer.concat([a, b]);
    expect(d.push(stream.subarray(0, a.length + 7))).toEqual([body(8, 1)]);
    expect(d.push(stream.subarray(a.length + 7))).toEqual([body(12, 2)]);
  });

  it('accepts a frame of exactly the limit and refuses one byte more before allocating', () => {
    const ok = new FrameSplitter({ maxFrameBytes: 64 });
    expect(ok.push(framed(body(64, 4)))).toHaveLength(1);
    const d = new FrameSplitter({ maxFrameBytes: 64 });
    const prefix = Buffer.alloc(4);
    prefix.writeInt32BE(65, 0);
    expect(() => d.push(prefix)).toThrow(FrameTooLargeError);
    try {
      new FrameSplitter({ maxFrameBytes: 64 }).push(prefix);
    } catch (e) {
      expect(e).toMatchObject({ code: 'LL_ERR_FRAME_SIZE', size: 65, max: 64 });
    }
  });

  it('refuses a 2 GiB size prefix and negative sizes', () => {
    for (const size of [0x7fffffff, -1, -0x80000000]) {
      const prefix = Buffer.alloc(4);
      prefix.writeInt32BE(size, 0);
      expect(() => new FrameSplitter({ maxFrameBytes: 100 * 1024 * 1024 }).push(prefix)).toThrow(size < 0 ? /negative frame size/ : /exceeds the limit/);
    }
  });

  it('cuts any stream the same way whatever the chunking', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 300 }), { minLength: 1, maxLength: 12 }),
        fc.array(fc.integer({ min: 1, max: 97 }), { minLength: 1, maxLength: 40 }),
        (sizes, cuts) => {
          const bodies = sizes.map((n, i) => body(n, i));
          const stream = Buffer.concat(bodies.map(framed));
          const d = new FrameSplitter({ maxFrameBytes: 1024 });
          const out: Buffer[] = [];
          let pos = 0;
          let i = 0;
          while (pos < stream.length) {
            const n = cuts[i++ % cuts.length]!;
            out.push(...d.push(stream.subarray(pos, pos + n)));
            pos += n;
          }
          expect(out.map((b) => b.toString('hex'))).toEqual(bodies.map((b) => b.toString('hex')));
          expect(d.buffered).toBe(0);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('FrameSplitter with an admission hook', () => {
  it('asks for each frame\'s bytes when its size prefix arrives, and holds the frame until resumed', () => {
    const asked: number[] = [];
    let allow = true;
    const d = new FrameSplitter({ maxFrameBytes: 1 << 20, admit: (size) => {
      asked.push(size);
      return allow;
    } });
    const a = framed(body(10, 1));
    const b = framed(body(300, 2));
    const c = framed(body(5, 3));
    // The first frame is admitted; the second is not, so the third is not even looked at.
    allow = true;
    expect(d.push(Buffer.concat([a, b.subarray(0, 8)])).map((f) => f.length)).toEqual([10]);
    expect(asked).toEqual([10, 300]);
    expect(d.assembling).toBe(300);
    allow = false;
    const d2 = new FrameSplitter({ maxFrameBytes: 1 << 20, admit: (size) => size < 100 || allow });
    expect(d2.push(Buffer.concat([a, b, c])).map((f) => f.length)).toEqual([10]);
    expect(d2.waitingFor).toBe(300);
    expect(d2.assembling).toBe(0);
    // More bytes while held return nothing.
    expect(d2.push(Buffer.alloc(0))).toEqual([]);
    d2.resume();
    expect(d2.waitingFor).toBe(0);
    const rest = d2.push(Buffer.alloc(0));
    expect(rest.map((f) => f.length)).toEqual([300, 5]);
    expect(rest[0]!.equals(body(300, 2))).toBe(true);
  });

  it('does not ask for an empty frame', () => {
    const asked: number[] = [];
    const d = new FrameSplitter({ maxFrameBytes: 1024, admit: (size) => {
      asked.push(size);
      return false;
    } });
    expect(d.push(framed(Buffer.alloc(0))).map((f) => f.length)).toEqual([0]);
    expect(asked).toEqual([]);
  });

  it('asks once for a frame whose size prefix is split across chunks, and finishes it after resume from later chunks', () => {
    const asked: number[] = [];
    let allow = false;
    const d = new FrameSplitter({ maxFrameBytes: 1 << 20, admit: (size) => {
      asked.push(size);
      return allow;
    } });
    const whole = Buffer.concat([framed(body(50, 6)), framed(body(7, 8))]);
    expect(d.push(whole.subarray(0, 2))).toEqual([]);
    expect(asked).toEqual([]);
    expect(d.push(whole.subarray(2, 20))).toEqual([]);
    expect(asked).toEqual([50]);
    expect(d.waitingFor).toBe(50);
    // While held, more bytes are queued but neither returned nor asked for again.
    expect(d.push(whole.subarray(20, 40))).toEqual([]);
    expect(asked).toEqual([50]);
    allow = true;
    d.resume();
    expect(d.assembling).toBe(50);
    expect(d.push(Buffer.alloc(0))).toEqual([]);
    expect(d.push(whole.subarray(40))).toEqual([body(50, 6), body(7, 8)]);
    expect(asked).toEqual([50, 7]);
    expect(d.assembling).toBe(0);
    expect(d.buffered).toBe(0);
  });
});
