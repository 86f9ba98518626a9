import { describe, expect, it } from 'vitest';
import { KeyOffsetMap, OFFSET_MAP_SLOT_BYTES } from '../../../src/log/offset-map.js';

const key = (s: string): Buffer => Buffer.from(s);

describe('KeyOffsetMap', () => {
  it('keeps the latest offset per key', () => {
    const m = new KeyOffsetMap(1 << 16);
    for (let i = 0; i < 1000; i++) expect(m.put(key(`k${i % 50}`), 0, key(`k${i % 50}`).length, i)).toBe(true);
    expect(m.size).toBe(50);
    for (let k = 0; k < 50; k++) expect(m.get(key(`k${k}`), 0, key(`k${k}`).length)).toBe(950 + k);
    expect(m.get(key('absent'), 0, 6)).toBe(-1);
    expect(m.latestOffset).toBe(999);
  });

  it('stays within its memory budget and refuses new keys once full, keeping known ones updatable', () => {
    const bytes = 100 * OFFSET_MAP_SLOT_BYTES;
    const m = new KeyOffsetMap(bytes, 0.9);
    expect(m.slots).toBe(100);
    expect(m.maxEntries).toBe(90);
    let accepted = 0;
    for (let i = 0; i < 200; i++) if (m.put(key(`key-${i}`), 0, key(`key-${i}`).length, i)) accepted++;
    expect(accepted).toBe(90);
    expect(m.full).toBe(true);
    expect(m.put(key('key-3'), 0, 5, 500)).toBe(true);
    expect(m.get(key('key-3'), 0, 5)).toBe(500);
    expect(m.put(key('key-150'), 0, 7, 501)).toBe(false);
  });

  it('sizes itself by the keys it will hold when that is below the budget', () => {
    const m = new KeyOffsetMap(128 * 1024 * 1024, 0.9, 1000);
    expect(m.slots * OFFSET_MAP_SLOT_BYTES).toBeLessThan(30_000);
    expect(m.maxEntries).toBeGreaterThanOrEqual(1000);
  });

  it('tells the empty key from a missing one', () => {
    const m = new KeyOffsetMap(4096);
    m.put(Buffer.alloc(0), 0, 0, 7);
    expect(m.get(Buffer.alloc(0), 0, 0)).toBe(7);
  });
});
