import { describe, expect, it } from 'vitest';
import { RetainedBuffers, ownedCopy } from '../../../src/ledger/retained-buffers.js';

describe('ownedCopy', () => {
  it('keeps a buffer that owns its memory and copies a slice into memory of its own', () => {
    const owned = Buffer.from(new Uint8Array(10).fill(7).buffer);
    expect(ownedCopy(owned)).toBe(owned);
    const chunk = Buffer.alloc(64 * 1024, 9);
    const slice = chunk.subarray(0, 10);
    const copy = ownedCopy(slice);
    expect(copy).not.toBe(slice);
    expect(copy.equals(slice)).toBe(true);
    expect(copy.buffer.byteLength).toBe(10);
    // A pooled small Buffer (Buffer.from / allocUnsafe share an 8 KiB slab) is a slice too.
    const pooled = Buffer.from('hello');
    expect(ownedCopy(pooled).buffer.byteLength).toBe(5);
  });
});

describe('RetainedBuffers', () => {
  it('charges a shared buffer once and gives it back with its last entry', () => {
    const r = new RetainedBuffers();
    const frame = Buffer.alloc(256 * 1024);
    const parts = [0, 1, 2, 3].map((i) => frame.subarray(i * 64 * 1024, (i + 1) * 64 * 1024));
    const kept = parts.map((p) => r.retain(p));
    kept.forEach((k, i) => expect(k).toBe(parts[i]));
    expect(r.bytes).toBe(256 * 1024);
    for (const k of kept.slice(0, 3)) r.release(k);
    expect(r.bytes).toBe(256 * 1024);
    r.release(kept[3]!);
    expect(r.bytes).toBe(0);
    expect(r.recount()).toBe(0);
  });

  it('copies an entry under an eighth of its buffer, so no entry pins more than eight times its size', () => {
    const r = new RetainedBuffers();
    const chunk = Buffer.alloc(64 * 1024, 1);
    const small = r.retain(chunk.subarray(100, 100 + 8 * 1024 - 1));
    expect(small.buffer).not.toBe(chunk.buffer);
    expect(r.bytes).toBe(8 * 1024 - 1);
    const large = r.retain(chunk.subarray(0, 8 * 1024));
    expect(large.buffer).toBe(chunk.buffer);
    // Once the chunk is charged, any slice of it is kept by reference at no further charge.
    const tiny = r.retain(chunk.subarray(20_000, 20_010));
    expect(tiny.buffer).toBe(chunk.buffer);
    expect(r.bytes).toBe(8 * 1024 - 1 + 64 * 1024);
    expect(r.recount()).toBe(r.bytes);
  });

  it('keeps a small entry by reference when the entries of its buffer arriving with it are an eighth of it', () => {
    const r = new RetainedBuffers();
    const answer = Buffer.alloc(1024 * 1024);
    // 1/64 of the buffer alone is copied; with 1/8 of it arriving together, it is kept and the buffer charged.
    expect(r.retain(answer.subarray(0, 16 * 1024), 16 * 1024).buffer).not.toBe(answer.buffer);
    expect(r.retain(answer.subarray(16 * 1024, 32 * 1024), 128 * 1024 - 1).buffer).not.toBe(answer.buffer);
    const kept = r.retain(answer.subarray(32 * 1024, 48 * 1024), 128 * 1024);
    expect(kept.buffer).toBe(answer.buffer);
    expect(r.bytes).toBe(2 * 16 * 1024 + 1024 * 1024);
    expect(r.recount()).toBe(r.bytes);
  });

  it('refuses to release what it does not retain', () => {
    expect(() => new RetainedBuffers().release(Buffer.alloc(1))).toThrow(/not retained/);
  });
});
