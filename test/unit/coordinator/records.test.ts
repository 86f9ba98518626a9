import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createGroupMetadataValue, createGroupMetadataValueMemberMetadata } from '../../../protocol/messages/data/group-coordinator/group-metadata-value.gen.js';
import { CoordinatorCorruptError } from '../../../src/coordinator/errors.js';
import { consumerGroupCurrentAssignmentRecord, consumerGroupMemberSubscriptionRecord, offsetCommitRecord } from '../../../src/coordinator/group-records.js';
import { MemberState, newMember } from '../../../src/coordinator/consumer-group.js';
import { decodeRecord, encodeRecord, type CoordinatorRecord } from '../../../src/coordinator/records.js';
import { expireTimestampMs, saturatedTimestamp } from '../../../src/coordinator/offsets.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+|#[^\n]*/g, ''), 'hex');

describe('coordinator records in Kafka\'s format', () => {
  it('writes an offset commit as OffsetCommitKey v1 and OffsetCommitValue v3', () => {
    const { key, value } = encodeRecord(offsetCommitRecord('g', 't', 2, { committedOffset: 10n, leaderEpoch: 3, metadata: 'm', commitTimestampMs: 1000, expireTimestampMs: null }));
    expect(key).toEqual(
      hex(`
        0001            # key version 1
        0001 67         # group "g"
        0001 74         # topic "t"
        00000002        # partition 2`),
    );
    expect(value).toEqual(
      hex(`
        0003                 # value version 3
        000000000000000a     # offset 10
        00000003             # leader epoch 3
        0001 6d              # metadata "m"
        00000000000003e8     # commit timestamp 1000`),
    );
  });

  it('writes value v1 (with the expire timestamp) when an OffsetCommit v2-4 retention was given', () => {
    const { value } = encodeRecord(offsetCommitRecord('g', 't', 0, { committedOffset: 1n, leaderEpoch: -1, metadata: '', commitTimestampMs: 5, expireTimestampMs: 9 }));
    expect(value!.readInt16BE(0)).toBe(1);
    expect(decodeRecord(Buffer.from('000100016700017400000000', 'hex'), value)).toMatchObject({ value: { offset: 1n, commitTimestamp: 5n, expireTimestamp: 9n } });
  });

  it('saturates an expire timestamp past Long.MAX_VALUE (now + a retention of Long.MAX_VALUE) at Long.MAX_VALUE', () => {
    const LONG_MAX = 2n ** 63n - 1n;
    const now = 1_796_000_000_000;
    const { value } = encodeRecord(offsetCommitRecord('g', 't', 0, { committedOffset: 1n, leaderEpoch: -1, metadata: '', commitTimestampMs: now, expireTimestampMs: expireTimestampMs(now, LONG_MAX) }));
    expect(decodeRecord(Buffer.from('000100016700017400000000', 'hex'), value)).toMatchObject({ value: { commitTimestamp: BigInt(now), expireTimestamp: LONG_MAX } });
    // At the boundary: exactly Long.MAX_VALUE, one below, and far past it.
    expect(saturatedTimestamp(Number(LONG_MAX))).toBe(LONG_MAX);
    expect(saturatedTimestamp(now + Number(LONG_MAX))).toBe(LONG_MAX);
    expect(expireTimestampMs(0, LONG_MAX - 1n)).toBe(Number(LONG_MAX - 1n));
    expect(saturatedTimestamp(2 ** 53)).toBe(2n ** 53n);
    expect(saturatedTimestamp(-(2 ** 64))).toBe(-(2n ** 63n));
  });

  it('reads a GroupMetadataValue v3 as Kafka writes it', () => {
    const value = hex(`
      0003                      # version 3
      0008 636f6e73756d6572     # protocol type "consumer"
      00000002                  # generation 2
      0005 72616e6765           # protocol "range"
      0002 6d31                 # leader "m1"
      0000000000000064          # current state timestamp 100
      00000001                  # 1 member
        0002 6d31               #   member id "m1"
        ffff                    #   group instance id null
        0001 63                 #   client id "c"
        0001 68                 #   client host "h"
        00007530                #   rebalance timeout 30000
        00002710                #   session timeout 10000
        00000001 aa             #   subscription
        00000002 bbcc           #   assignment`);
    const rec = decodeRecord(hex('0002 0001 67'), value);
    expect(rec.type).toBe('GroupMetadata');
    expect(rec).toMatchObject({
      key: { group: 'g' },
      value: {
        protocolType: 'consumer',
        generation: 2,
        protocol: 'range',
        leader: 'm1',
        currentStateTimestamp: 100n,
        members: [{ memberId: 'm1', groupInstanceId: null, clientId: 'c', clientHost: 'h', rebalanceTimeout: 30000, sessionTimeout: 10000 }],
      },
    });
    const back = encodeRecord(rec);
    expect(back.value).toEqual(value);
  });

  it('reads tombstones, and keeps record types it does not know as opaque bytes', () => {
    expect(decodeRecord(hex('0002 0001 67'), null)).toMatchObject({ type: 'GroupMetadata', value: null });
    const share = decodeRecord(hex('000b 0001 67'), hex('0000 00'));
    expect(share).toMatchObject({ type: 'Unknown', keyVersion: 11 });
    expect(encodeRecord(share)).toEqual({ key: hex('000b 0001 67'), value: hex('0000 00') });
  });

  it('rejects bytes that are not a coordinator record with LL_ERR_COORDINATOR_CORRUPT', () => {
    expect(() => decodeRecord(Buffer.from([0]), null)).toThrow(CoordinatorCorruptError);
    expect(() => decodeRecord(hex('0001 00ff'), null)).toThrow(/cannot decode/);
    expect(() => decodeRecord(hex('0002 0001 67'), hex('0009'))).toThrow(/value version 9/);
  });

  it('round-trips KIP-848 records', () => {
    fc.assert(
      fc.property(
        fc.record({
          memberId: fc.string({ minLength: 1, maxLength: 30 }),
          epoch: fc.integer({ min: 0, max: 1000 }),
          topics: fc.array(fc.string({ maxLength: 10 }), { maxLength: 4 }),
          regex: fc.option(fc.string({ minLength: 1, maxLength: 10 }), { nil: null }),
          partitions: fc.uniqueArray(fc.integer({ min: 0, max: 100 }), { maxLength: 8 }),
        }),
        ({ memberId, epoch, topics, regex, partitions }) => {
          const m = {
            ...newMember(memberId),
            subscribedTopicNames: topics,
            subscribedTopicRegex: regex,
            rebalanceTimeoutMs: 1000,
            memberEpoch: epoch,
            previousMemberEpoch: Math.max(0, epoch - 1),
            state: MemberState.STABLE,
            assignedPartitions: new Map(partitions.length ? [['AAAAAAAAAAAAAAAAAAAAAQ', new Set(partitions)]] : []),
          };
          for (const rec of [consumerGroupMemberSubscriptionRecord('g', m), consumerGroupCurrentAssignmentRecord('g', m)] as CoordinatorRecord[]) {
            const enc = encodeRecord(rec);
            expect(encodeRecord(decodeRecord(enc.key, enc.value))).toEqual(enc);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('builds GroupMetadataValue members with subscription and assignment', () => {
    const v = createGroupMetadataValue({ members: [createGroupMetadataValueMemberMetadata({ memberId: 'x', subscription: Buffer.from([1]), assignment: Buffer.from([2]) })] });
    const enc = encodeRecord({ type: 'GroupMetadata', key: { group: 'g' }, value: v });
    const dec = decodeRecord(enc.key, enc.value);
    expect(dec.type === 'GroupMetadata' && dec.value?.members[0]?.assignment).toEqual(Buffer.from([2]));
  });
});
