/** Translating group offsets of active-active topics between clusters (src/replication/offset-map.ts). */
import { describe, expect, it } from 'vitest';
import { ActiveOffsetMap, MAX_SAMPLES } from '../../../src/replication/offset-map.js';

// Here is cluster B. Remote A's log: A0 A1 [b0] A2 [c0] A3   (b0: copied from B, c0: copied from C)
// B's log:                          b0 [A0 A1] b1 [c0] [A2 A3]
function mapOfB(): ActiveOffsetMap {
  const m = new ActiveOffsetMap('B');
  // Reading A: samples after each batch (offset on A, highest origin offsets A held before it).
  m.recordSeen('t', 0, 'A', 2, new Map());
  m.recordSeen('t', 0, 'A', 3, new Map([['B', 0]]));
  m.recordSeen('t', 0, 'A', 4, new Map([['B', 0]]));
  m.recordSeen('t', 0, 'A', 5, new Map([['B', 0], ['C', 0]]));
  m.recordSeen('t', 0, 'A', 6, new Map([['B', 0], ['C', 0]]));
  // Copies appended here: A0-A1 at 1, c0 at 4, A2-A3 at 5 (A2 is offset 3 on A, A3 offset 5).
  m.recordPlacement('t', 0, 'A', 0, 1, 1, 2);
  m.recordPlacement('t', 0, 'C', 0, 0, 4, 1);
  m.recordPlacement('t', 0, 'A', 3, 5, 5, 2);
  return m;
}

describe('ActiveOffsetMap.translate', () => {
  it('resumes after everything a group read on the remote, at the first record it had not', () => {
    const m = mapOfB();
    // Read all of A (up to 6): it saw b0, c0, A0-A3; unread here: b1 (offset 3).
    expect(m.translate('t', 0, 'A', 6, 7)).toBe(3);
    // Read A up to 3 (A0, A1, b0): unread are b1 (3), c0 (4), A2 (5): resume at 3.
    expect(m.translate('t', 0, 'A', 3, 7)).toBe(3);
  });

  it('never resumes past a record the group had not read: between samples it takes the earlier one', () => {
    const m = mapOfB();
    // Up to 2 (A0, A1; b0 not yet): b0 at 0 is unread, and B's own records the remote held none of cannot be placed.
    expect(m.translate('t', 0, 'A', 2, 7)).toBeNull();
  });

  it('does not translate what its bounded samples no longer reach', () => {
    const m = new ActiveOffsetMap('B');
    for (let i = 0; i < MAX_SAMPLES + 10; i++) {
      m.recordSeen('t', 0, 'A', i + 1, new Map([['B', 0]]));
      m.recordPlacement('t', 0, 'A', i, i, i + 1, 1);
    }
    expect(m.translate('t', 0, 'A', 3, 1000)).toBeNull();
    // Recent enough: translated, conservatively (the copies it no longer has samples of are read again).
    const recent = m.translate('t', 0, 'A', MAX_SAMPLES + 5, 1000);
    expect(recent).not.toBeNull();
    expect(recent!).toBeLessThanOrEqual(MAX_SAMPLES + 6);
    m.forgetTopic('t');
    expect(m.translate('t', 0, 'A', MAX_SAMPLES + 5, 1000)).toBeNull();
  });
});
