import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { deepEqual } from '../../../../protocol/wire/tagged.js';

/** The definition deepEqual implements, written the obvious way: own keys with a defined value, compared recursively. */
function reference(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Buffer.isBuffer(a) || Buffer.isBuffer(b)) return Buffer.isBuffer(a) && Buffer.isBuffer(b) && a.equals(b);
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => reference(x, b[i]));
  const defined = (o: object) => Object.entries(o).filter(([, v]) => v !== undefined);
  const ea = defined(a);
  const eb = new Map(defined(b));
  return ea.length === eb.size && ea.every(([k, v]) => eb.has(k) && reference(v, eb.get(k)));
}

/** A deep copy that keeps Buffers Buffers (structuredClone makes them plain Uint8Arrays). */
function copy(v: unknown): unknown {
  if (Buffer.isBuffer(v)) return Buffer.from(v);
  if (Array.isArray(v)) return v.map(copy);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, copy(x)]));
  return v;
}

const { value } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom(0, 1, -1, 'a', '', null, undefined, true, false, 0n, 5n),
    fc.uint8Array({ maxLength: 3 }).map((u) => Buffer.from(u)),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('x', 'y', 'z', 'unknownTaggedFields'), tie('value'), { maxKeys: 3 }),
  ),
}));

describe('deepEqual (tagged-field defaults)', () => {
  it('treats an own key whose value is undefined as absent', () => {
    expect(deepEqual({ epoch: -1, endOffset: -1n, extra: undefined }, { epoch: -1, endOffset: -1n })).toBe(true);
    expect(deepEqual({ epoch: -1 }, { epoch: -1, endOffset: undefined })).toBe(true);
    expect(deepEqual({ epoch: -1 }, { epoch: -1, endOffset: -1n })).toBe(false);
    expect(deepEqual({ epoch: -1, endOffset: -1n }, { epoch: -1 })).toBe(false);
  });

  it('compares nested structs, arrays, bigints and buffers by value', () => {
    const a = { leader: { id: 1, epoch: 2n }, tags: [{ tag: 0, data: Buffer.from([1, 2]) }] };
    expect(deepEqual(a, { leader: { id: 1, epoch: 2n }, tags: [{ tag: 0, data: Buffer.from([1, 2]) }] })).toBe(true);
    expect(deepEqual(a, { leader: { id: 1, epoch: 3n }, tags: [{ tag: 0, data: Buffer.from([1, 2]) }] })).toBe(false);
    expect(deepEqual(a, { leader: { id: 1, epoch: 2n }, tags: [{ tag: 0, data: Buffer.from([1, 3]) }] })).toBe(false);
    expect(deepEqual([1, 2], [1, 2, 3])).toBe(false);
    expect(deepEqual({ a: 1 }, [1])).toBe(false);
  });

  it('ignores keys an object inherits', () => {
    const inherited = Object.create({ epoch: 5 }) as Record<string, unknown>;
    inherited.endOffset = 1n;
    expect(deepEqual(inherited, { endOffset: 1n })).toBe(true);
    expect(deepEqual({ endOffset: 1n, epoch: 5 }, inherited)).toBe(false);
  });

  it('agrees with the reference definition on any pair of message-shaped values', () => {
    fc.assert(
      fc.property(value, value, (a, b) => {
        expect(deepEqual(a, b)).toBe(reference(a, b));
        expect(deepEqual(a, copy(a))).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});
