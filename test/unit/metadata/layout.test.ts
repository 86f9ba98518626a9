import { describe, expect, it } from 'vitest';
import {
  ledgerKey,
  ledgersPrefix,
  offsetSegment,
  parseOffsetSegment,
  parsePartitionKey,
  partitionOwnerKey,
  partitionPrefix,
  partitionStateKey,
  groupKey,
  topicKey,
  topicPartitionsPrefix,
  segment,
  parseSegment,
  compareKeys,
} from '../../../src/metadata/index.js';

describe('metadata key layout', () => {
  it('builds the documented keys', () => {
    expect(topicKey('orders')).toBe('/topics/orders');
    expect(partitionStateKey('orders', 3)).toBe('/partitions/orders/3/state');
    expect(ledgerKey('orders', 3, 1234n)).toBe('/partitions/orders/3/ledgers/0000000000000001234');
    expect(partitionOwnerKey('orders', 3)).toBe('/owners/orders/3');
  });

  it('keeps a Kafka topic name as it is and percent-encodes separators in client-chosen names', () => {
    expect(segment('my.topic_name-1')).toBe('my.topic_name-1');
    expect(groupKey('team/a%b')).toBe('/groups/team%2Fa%25b');
    expect(parseSegment(segment('team/a%b'))).toBe('team/a%b');
  });

  it('nests prefixes so that one topic or partition never matches another that extends its name', () => {
    expect(ledgerKey('ab', 0, 0).startsWith(topicPartitionsPrefix('a'))).toBe(false);
    expect(ledgerKey('a', 10, 0).startsWith(partitionPrefix('a', 1))).toBe(false);
    expect(partitionStateKey('a', 1).startsWith(ledgersPrefix('a', 1))).toBe(false);
    expect(ledgerKey('a', 1, 5).startsWith(ledgersPrefix('a', 1))).toBe(true);
  });

  it('pads offsets so that key order is offset order, up to the largest int64', () => {
    const offsets = [0n, 9n, 10n, 999n, 1000n, 2n ** 40n, 2n ** 63n - 1n];
    const keys = offsets.map((o) => ledgerKey('t', 0, o));
    expect([...keys].sort(compareKeys)).toEqual(keys);
    expect(parseOffsetSegment(offsetSegment(2n ** 63n - 1n))).toBe(2n ** 63n - 1n);
    expect(() => offsetSegment(-1)).toThrow(/non-negative int64/);
    expect(() => offsetSegment(2n ** 63n)).toThrow(/non-negative int64/);
  });

  it('parses partition keys back and ignores keys outside the partition tree', () => {
    expect(parsePartitionKey(ledgerKey('t.x', 7, 42n))).toEqual({ kind: 'ledger', topic: 't.x', partition: 7, firstOffset: 42n });
    expect(parsePartitionKey(partitionStateKey('t', 0))).toEqual({ kind: 'state', topic: 't', partition: 0 });
    expect(parsePartitionKey('/partitions/t/07/state')).toBeNull();
    expect(parsePartitionKey('/partitions/t/0/ledgers/12')).toBeNull();
    expect(parsePartitionKey('/topics/t')).toBeNull();
  });

  it('rejects partitions and offsets outside Kafka ranges', () => {
    expect(() => partitionStateKey('t', -1)).toThrow(/int32/);
    expect(() => partitionStateKey('t', 2 ** 31)).toThrow(/int32/);
    expect(() => topicKey('')).toThrow(/non-empty/);
  });
});
