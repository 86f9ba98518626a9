import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mapBounded, mapChunks, mapNestedBounded } from '../../../src/api/bounded-map.js';

describe('mapBounded', () => {
  it('gives every result in the order of the items, with at most `width` in progress, whatever order they finish in', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat(5), { maxLength: 60 }), fc.integer({ min: 1, max: 8 }), async (delays, width) => {
        let running = 0;
        let most = 0;
        const seen: number[] = [];
        const out = await mapBounded(
          delays,
          async (d, i) => {
            running++;
            most = Math.max(most, running);
            seen.push(i);
            for (let k = 0; k < d; k++) await Promise.resolve();
            running--;
            return i * 2;
          },
          width,
        );
        expect(out).toEqual(delays.map((_, i) => i * 2));
        expect(most).toBeLessThanOrEqual(width);
        expect(seen.sort((a, b) => a - b)).toEqual(delays.map((_, i) => i));
      }),
    );
  });

  it('answers an empty list with an empty list, and treats a width below 1 as 1', async () => {
    expect(await mapBounded([], async () => 1)).toEqual([]);
    expect(await mapBounded([1, 2, 3], async (x) => x + 1, 0)).toEqual([2, 3, 4]);
  });

  it('rejects with the first failure', async () => {
    await expect(mapBounded([1, 2, 3], async (x) => (x === 2 ? Promise.reject(new Error('two')) : x))).rejects.toThrow('two');
  });

  it('maps nested lists across their groups, at most `width` at a time in all, and gives the results grouped as the input', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(fc.nat(3), { maxLength: 6 }), { maxLength: 8 }), fc.integer({ min: 1, max: 5 }), async (groups, width) => {
        let running = 0;
        let most = 0;
        const out = await mapNestedBounded(
          groups,
          (g) => g,
          async (d, g, gi) => {
            running++;
            most = Math.max(most, running);
            for (let k = 0; k < d; k++) await Promise.resolve();
            running--;
            return `${gi}:${d}:${g.length}`;
          },
          width,
        );
        expect(out).toEqual(groups.map((g, gi) => g.map((d) => `${gi}:${d}:${g.length}`)));
        expect(most).toBeLessThanOrEqual(width);
      }),
    );
  });

  it('hands consecutive chunks of at most `width` to the function, one at a time, and concatenates what it answers', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer(), { maxLength: 50 }), fc.integer({ min: 1, max: 9 }), async (items, width) => {
        const chunks: number[][] = [];
        let running = 0;
        const out = await mapChunks(
          items,
          async (chunk) => {
            expect(++running).toBe(1);
            chunks.push([...chunk]);
            await Promise.resolve();
            running--;
            return chunk.map((x) => x * 3);
          },
          width,
        );
        expect(out).toEqual(items.map((x) => x * 3));
        expect(chunks.flat()).toEqual(items);
        expect(chunks.every((c) => c.length >= 1 && c.length <= width)).toBe(true);
      }),
    );
    expect(await mapChunks([], async () => [1])).toEqual([]);
  });
});
