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

  it('counts the copies a group read of a batch it stopped in the middle of, so none of them is read again', () => {
    // Remote A's log:  [b0] (0)  A0 (1)  [c0..c9] (2..11, one batch copied from C)  A1 (12)
    // Here, B's log:    b0 (0)  [c0..c9] (1..10: C's batch reached B first)  [A0] (11)  [A1] (12)
    const samples = (m: ActiveOffsetMap, run: boolean): ActiveOffsetMap => {
      m.recordSeen('t', 0, 'A', 1, new Map([['B', 0]]));
      m.recordSeen('t', 0, 'A', 2, new Map([['B', 0]]));
      m.recordSeen('t', 0, 'A', 12, new Map([['B', 0], ['C', 9]]), run ? { base: 2, origin: 'C', firstOrigin: 0 } : null);
      m.recordSeen('t', 0, 'A', 13, new Map([['B', 0], ['C', 9]]));
      m.recordPlacement('t', 0, 'C', 0, 9, 1, 10);
      m.recordPlacement('t', 0, 'A', 1, 1, 11, 1);
      m.recordPlacement('t', 0, 'A', 12, 12, 12, 1);
      return m;
    };
    const m = samples(new ActiveOffsetMap('B'), true);
    // Committed at 7 on A: b0, A0 and c0..c4 read. Here c5 (offset 6) is the first unread record.
    expect(m.translate('t', 0, 'A', 7, 13)).toBe(6);
    // Without the run, the sample before the batch says no copy of C was read: all of them again.
    expect(samples(new ActiveOffsetMap('B'), false).translate('t', 0, 'A', 7, 13)).toBe(1);
    // At the batch's edges the samples themselves answer: before it (A0 unread here) and after it (A1 unread).
    expect(m.translate('t', 0, 'A', 2, 13)).toBe(1);
    expect(m.translate('t', 0, 'A', 12, 13)).toBe(12);
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
