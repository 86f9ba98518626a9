import { describe, expect, it } from 'vitest';
import { OffsetStore } from '../../../src/coordinator/offsets.js';
import { TopicDeletions } from '../../../src/coordinator/topic-deletions.js';
import { FakeTopics } from './harness.js';

const OFFSET = { committedOffset: 1n, leaderEpoch: -1, metadata: '', commitTimestampMs: 0, expireTimestampMs: null };

describe('topic deletions a partition applies at load', () => {
  it('gives a partition that was not active the topics deleted since it last loaded, once, and one that was active none', () => {
    const d = new TopicDeletions();
    d.record('a', [1]);
    d.record('b', [1]);
    d.record('a', [1]);
    expect([...d.takePending(0)].sort()).toEqual(['a', 'b']);
    expect([...d.takePending(0)]).toEqual([]);
    expect([...d.takePending(1)]).toEqual([]);
    d.record('c', []);
    expect([...d.takePending(1)]).toEqual(['c']);
  });

  it('adds the topics the registry does not know and counts the offsets held for the stale topics', () => {
    const d = new TopicDeletions();
    const topics = new FakeTopics();
    topics.add('live', 1);
    topics.add('recreated', 1);
    d.record('recreated', []);
    const offsets = new OffsetStore();
    offsets.put('g', 'live', 0, OFFSET);
    offsets.put('g', 'recreated', 0, OFFSET);
    offsets.put('h', 'gone', 0, OFFSET);
    offsets.put('h', 'gone', 1, OFFSET);
    const stale = d.staleAtLoad(0, offsets, topics);
    expect([...stale.topics].sort()).toEqual(['gone', 'recreated']);
    expect(stale.offsets).toBe(3);
  });

  it('finds the offsets recorded with another id than their topic\'s now, and keeps those without an id or with the same', () => {
    const d = new TopicDeletions();
    const topics = new FakeTopics();
    topics.add('orders', 1);
    const id = topics.get('orders')!.topicId;
    const offsets = new OffsetStore();
    offsets.put('old', 'orders', 0, { ...OFFSET, topicId: 'AAAAAAAAAAAAAAAAAAAAZw' });
    offsets.put('new', 'orders', 0, { ...OFFSET, topicId: id });
    offsets.put('v3', 'orders', 0, OFFSET);
    const stale = d.staleAtLoad(0, offsets, topics);
    expect(stale.entries).toEqual([{ groupId: 'old', topic: 'orders', partition: 0 }]);
    expect([...stale.topics]).toEqual([]);
    expect(stale.offsets).toBe(1);
  });
});
