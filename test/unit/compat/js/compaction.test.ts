import { describe, expect, it } from 'vitest';
import { COMPACTION } from '../../../../compat/js/common.js';

const work = COMPACTION.workload();
const line = (o: number): string => `${o} ${work[o]!.key} ${work[o]!.value}`;

describe("the compaction scenario's workload and checks", () => {
  it('updates four keys over six rounds with two tombstones, then six roll records', () => {
    expect(work).toHaveLength(30);
    expect(work.filter((w) => w.value === null).map((w) => w.key)).toEqual(['k1', 'k3']);
    expect(work.slice(24).every((w) => w.key === 'roll')).toBe(true);
    expect(COMPACTION.topicConfigs['cleanup.policy']).toBe('compact');
  });

  it('accepts the survivors Kafka 4.4 leaves: the latest of each key in the sealed segments, the active segment whole', () => {
    const kafka = [20, 21, 22, 23, 24, 25, 26, 27, 28, 29].map(line);
    expect(kafka[3]).toBe('23 k3 null');
    expect(COMPACTION.check(kafka, work)).toEqual([]);
  });

  it('reports a latest record that is gone and an offset holding another record', () => {
    const wrong = [line(20), line(21), line(22), '24 k0 k0-r5', ...[25, 26, 27, 28, 29].map(line)];
    expect(COMPACTION.check(wrong, work)).toEqual(['offset 24 holds k0 k0-r5, not what was produced there', 'the latest record of k3 (offset 23) is gone']);
  });
});
