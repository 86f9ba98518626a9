import { describe, expect, it } from 'vitest';
import { MAX_PARTITIONS_PER_REQUEST, MAX_RECORDS_PER_REQUEST, topicBatches, topicName } from '../../../../bench/lib/topics.js';

describe('topic creation batches', () => {
  it('never asks one CreateTopics request for more than 10,000 records (a topic\'s and one per partition), nor partitions', () => {
    const batches = topicBatches(1000, 100);
    expect(batches).toHaveLength(11);
    for (const [, n] of batches) {
      expect(n * 100).toBeLessThanOrEqual(MAX_PARTITIONS_PER_REQUEST);
      expect(n * 101).toBeLessThanOrEqual(MAX_RECORDS_PER_REQUEST);
    }
    expect(batches.reduce((a, [, n]) => a + n, 0)).toBe(1000);
  });

  it('covers every topic once, the last batch taking the rest', () => {
    const batches = topicBatches(7, 3000);
    expect(batches).toEqual([[0, 3], [3, 3], [6, 1]]);
  });

  it('refuses a topic larger than one request may create, and non-positive sizes', () => {
    expect(() => topicBatches(1, 10_000)).toThrow(/over what one CreateTopics request may create/);
    expect(() => topicBatches(0, 10)).toThrow(/positive/);
    expect(() => topicBatches(10, 0)).toThrow(/positive/);
  });

  it('names topics so they sort in creation order', () => {
    expect(topicName('bench-p', 7)).toBe('bench-p-00007');
    expect(topicName('bench-p', 999) < topicName('bench-p', 1000)).toBe(true);
  });
});
