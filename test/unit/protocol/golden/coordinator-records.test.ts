/**
 * Records of the `__consumer_offsets` topic as Kafka writes them (group coordinator schemas): the record
 * key is `int16 version` + key struct, and the key version says which record it is (0-1 OffsetCommitKey,
 * 2 GroupMetadataKey); the value is `int16 version` + value struct in that version. The fixtures under
 * test/golden/coordinator-records/ were built from the schemas and read back, byte for byte, by Kafka's own
 * generated classes (kafka-group-coordinator 4.4.0).
 */
import { describe, expect, it } from 'vitest';
import {
  createGroupMetadataKey,
  decodeGroupMetadataKey,
  encodeGroupMetadataKey,
  GroupMetadataKeyVersions,
} from '../../../../protocol/messages/data/group-coordinator/group-metadata-key.gen.js';
import {
  createGroupMetadataValue,
  createGroupMetadataValueMemberMetadata,
  decodeGroupMetadataValue,
  encodeGroupMetadataValue,
} from '../../../../protocol/messages/data/group-coordinator/group-metadata-value.gen.js';
import { createOffsetCommitKey, decodeOffsetCommitKey, encodeOffsetCommitKey, OffsetCommitKeyVersions } from '../../../../protocol/messages/data/group-coordinator/offset-commit-key.gen.js';
import { createOffsetCommitValue, decodeOffsetCommitValue, encodeOffsetCommitValue } from '../../../../protocol/messages/data/group-coordinator/offset-commit-value.gen.js';
import { Reader } from '../../../../protocol/wire/reader.js';
import type { Writer } from '../../../../protocol/wire/writer.js';
import { hex, listGoldenFiles, loadGolden, versionPrefixed } from '../../../support/golden.js';

interface RecordFixture<T> {
  file: string;
  version: number;
  decode: (r: Reader, v: number) => T;
  encode: (w: Writer, m: T, v: number) => void;
  expected: T;
}

const fixtures: RecordFixture<unknown>[] = [];
function record<T>(f: RecordFixture<T>): void {
  fixtures.push(f as RecordFixture<unknown>);
}

const T0 = 1_700_000_000_000n;
// ConsumerProtocolSubscription v0 (topics ["orders"], null user data) and Assignment v0 (orders [0, 1], null user data).
const SUBSCRIPTION = Buffer.from('0000' + '00000001' + '0006' + Buffer.from('orders').toString('hex') + 'ffffffff', 'hex');
const ASSIGNMENT = Buffer.from('0000' + '00000001' + '0006' + Buffer.from('orders').toString('hex') + '00000002' + '00000000' + '00000001' + 'ffffffff', 'hex');

record({
  file: 'coordinator-records/offset-commit-key-v1-000.hex',
  version: 1,
  decode: decodeOffsetCommitKey,
  encode: encodeOffsetCommitKey,
  expected: createOffsetCommitKey({ group: 'golden-group', topic: 'orders', partition: 2 }),
});

record({
  file: 'coordinator-records/offset-commit-value-v1-000.hex',
  version: 1,
  decode: decodeOffsetCommitValue,
  encode: encodeOffsetCommitValue,
  expected: createOffsetCommitValue({ offset: 100n, metadata: 'checkpoint', commitTimestamp: T0, expireTimestamp: T0 + 86_400_000n }),
});

record({
  file: 'coordinator-records/offset-commit-value-v3-000.hex',
  version: 3,
  decode: decodeOffsetCommitValue,
  encode: encodeOffsetCommitValue,
  expected: createOffsetCommitValue({ offset: 100n, leaderEpoch: 5, metadata: '', commitTimestamp: T0 }),
});

record({
  file: 'coordinator-records/offset-commit-value-v4-000.hex',
  version: 4,
  decode: decodeOffsetCommitValue,
  encode: encodeOffsetCommitValue,
  expected: createOffsetCommitValue({ offset: 100n, leaderEpoch: -1, metadata: 'checkpoint', commitTimestamp: T0 }),
});

record({
  file: 'coordinator-records/group-metadata-key-v2-000.hex',
  version: 2,
  decode: decodeGroupMetadataKey,
  encode: encodeGroupMetadataKey,
  expected: createGroupMetadataKey({ group: 'golden-group' }),
});

record({
  file: 'coordinator-records/group-metadata-value-v3-000.hex',
  version: 3,
  decode: decodeGroupMetadataValue,
  encode: encodeGroupMetadataValue,
  expected: createGroupMetadataValue({
    protocolType: 'consumer',
    generation: 3,
    protocol: 'range',
    leader: 'member-1',
    currentStateTimestamp: T0,
    members: [
      createGroupMetadataValueMemberMetadata({
        memberId: 'member-1',
        groupInstanceId: 'instance-1',
        clientId: 'client-1',
        clientHost: '/127.0.0.1',
        rebalanceTimeout: 300_000,
        sessionTimeout: 60_000,
        subscription: SUBSCRIPTION,
        assignment: ASSIGNMENT,
      }),
    ],
  }),
});

record({
  file: 'coordinator-records/group-metadata-value-v4-000.hex',
  version: 4,
  decode: decodeGroupMetadataValue,
  encode: encodeGroupMetadataValue,
  expected: createGroupMetadataValue({
    protocolType: 'consumer',
    generation: 4,
    protocol: 'range',
    leader: null,
    currentStateTimestamp: T0,
    members: [
      createGroupMetadataValueMemberMetadata({
        memberId: 'member-2',
        groupInstanceId: null,
        clientId: 'client-2',
        clientHost: '/127.0.0.1',
        rebalanceTimeout: 300_000,
        sessionTimeout: 60_000,
        subscription: SUBSCRIPTION,
        assignment: Buffer.alloc(0),
      }),
    ],
  }),
});

describe('__consumer_offsets records', () => {
  it.each(fixtures)('$file decodes into the expected record and encodes back byte for byte', ({ file, version, decode, encode, expected }) => {
    const golden = loadGolden(file);
    const r = new Reader(golden);
    expect(r.int16()).toBe(version);
    const decoded = decode(r, version);
    r.complete();
    expect(decoded).toEqual(expected);
    expect(hex(versionPrefixed((w) => encode(w, expected, version), version))).toBe(hex(golden));
  });

  it('tells the record type by the key version: 0-1 offset commit, 2 group metadata', () => {
    expect(OffsetCommitKeyVersions).toEqual({ min: 0, max: 1 });
    expect(GroupMetadataKeyVersions).toEqual({ min: 2, max: 2 });
    expect(loadGolden('coordinator-records/offset-commit-key-v1-000.hex').readInt16BE(0)).toBe(1);
    expect(loadGolden('coordinator-records/group-metadata-key-v2-000.hex').readInt16BE(0)).toBe(2);
  });

  it('writes OffsetCommitKey v0 and v1 identically but for the version prefix', () => {
    const key = createOffsetCommitKey({ group: 'golden-group', topic: 'orders', partition: 2 });
    const v0 = versionPrefixed((w) => encodeOffsetCommitKey(w, key, 0), 0);
    const v1 = versionPrefixed((w) => encodeOffsetCommitKey(w, key, 1), 1);
    expect(hex(v0.subarray(2))).toBe(hex(v1.subarray(2)));
  });

  it('has an expectation for every coordinator record fixture', () => {
    const files = listGoldenFiles().filter((f) => f.startsWith('coordinator-records/'));
    expect(files.sort()).toEqual(fixtures.map((f) => f.file).sort());
  });
});
