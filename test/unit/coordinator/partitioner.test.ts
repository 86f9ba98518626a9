import { describe, expect, it } from 'vitest';
import { javaStringHashCode, kafkaAbs, partitionForGroup } from '../../../src/coordinator/partitioner.js';

describe('__consumer_offsets partition of a group', () => {
  it('computes Java String.hashCode over UTF-16 code units', () => {
    expect(javaStringHashCode('')).toBe(0);
    expect(javaStringHashCode('hello')).toBe(99162322);
    // Overflows wrap in 32 bits; this string famously hashes to Integer.MIN_VALUE.
    expect(javaStringHashCode('polygenelubricants')).toBe(-2147483648);
    // A character outside the BMP counts as two code units, as in Java.
    expect(javaStringHashCode('😀')).toBe(0xd83d * 31 + 0xde00);
  });

  it('maps Integer.MIN_VALUE to 0 as Kafka\'s Utils.abs does', () => {
    expect(kafkaAbs(-2147483648)).toBe(0);
    expect(kafkaAbs(-5)).toBe(5);
    expect(partitionForGroup('polygenelubricants', 50)).toBe(0);
  });

  it('spreads groups over the partitions like Kafka (abs(hashCode) % n)', () => {
    expect(partitionForGroup('hello', 50)).toBe(99162322 % 50);
    const seen = new Set<number>();
    for (let i = 0; i < 500; i++) seen.add(partitionForGroup(`group-${i}`, 50));
    expect(seen.size).toBe(50);
  });
});
