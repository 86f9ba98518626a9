/**
 * The consumer protocol's embedded payloads: ConsumerProtocolSubscription (JoinGroup protocol metadata)
 * and ConsumerProtocolAssignment (SyncGroup assignment), each framed as `int16 version` + the struct in
 * that version. Fixtures under test/golden/consumer-protocol/ (checked against Kafka's own Java classes)
 * are compared with the generated codec, with kafkajs 2.2.4's `assignerProtocol.js` encoders and decoders,
 * and with the payloads librdkafka 2.0.2 put in the captured JoinGroup and SyncGroup frames.
 *
 * kafkajs writes a version-0 body whatever version it is given: its MemberMetadata/MemberAssignment
 * encoders take `version` only for the prefix. For assignments that is harmless (v1-v3 add no fields);
 * a subscription labelled v1+ is truncated and does not parse (as in Kafka's own parser).
 */
import { describe, expect, it } from 'vitest';
import { DecodeError } from '../../../../protocol/errors.js';
import {
  createConsumerProtocolAssignment,
  createConsumerProtocolAssignmentTopicPartition,
  decodeConsumerProtocolAssignment,
  encodeConsumerProtocolAssignment,
  type ConsumerProtocolAssignment,
} from '../../../../protocol/messages/data/consumer-protocol-assignment.gen.js';
import {
  createConsumerProtocolSubscription,
  createConsumerProtocolSubscriptionTopicPartition,
  decodeConsumerProtocolSubscription,
  encodeConsumerProtocolSubscription,
  type ConsumerProtocolSubscription,
} from '../../../../protocol/messages/data/consumer-protocol-subscription.gen.js';
import { JoinGroupApi } from '../../../../protocol/messages/011-join-group.gen.js';
import { SyncGroupApi } from '../../../../protocol/messages/014-sync-group.gen.js';
import { readRequestHeader } from '../../../../protocol/headers.js';
import { Reader } from '../../../../protocol/wire/reader.js';
import { hex, kafkajsAssignerProtocol, listGoldenFiles, loadGolden, versionPrefixed } from '../../../support/golden.js';

function readSubscription(bytes: Buffer): { version: number; subscription: ConsumerProtocolSubscription } {
  const r = new Reader(bytes);
  const version = r.int16();
  const subscription = decodeConsumerProtocolSubscription(r, version);
  r.complete();
  return { version, subscription };
}

function readAssignment(bytes: Buffer): { version: number; assignment: ConsumerProtocolAssignment } {
  const r = new Reader(bytes);
  const version = r.int16();
  const assignment = decodeConsumerProtocolAssignment(r, version);
  r.complete();
  return { version, assignment };
}

const writeSubscription = (s: ConsumerProtocolSubscription, v: number): Buffer => versionPrefixed((w) => encodeConsumerProtocolSubscription(w, s, v), v);
const writeAssignment = (a: ConsumerProtocolAssignment, v: number): Buffer => versionPrefixed((w) => encodeConsumerProtocolAssignment(w, a, v), v);

const subscriptions: { file: string; version: number; expected: ConsumerProtocolSubscription }[] = [
  { file: 'consumer-protocol/subscription-v0-000.hex', version: 0, expected: createConsumerProtocolSubscription({ topics: ['orders', 'audit'], userData: Buffer.from('ud') }) },
  {
    file: 'consumer-protocol/subscription-v1-000.hex',
    version: 1,
    expected: createConsumerProtocolSubscription({
      topics: ['orders'],
      userData: null,
      ownedPartitions: [createConsumerProtocolSubscriptionTopicPartition({ topic: 'orders', partitions: [0, 1] })],
    }),
  },
  {
    file: 'consumer-protocol/subscription-v2-000.hex',
    version: 2,
    expected: createConsumerProtocolSubscription({
      topics: ['orders'],
      userData: null,
      ownedPartitions: [createConsumerProtocolSubscriptionTopicPartition({ topic: 'orders', partitions: [2] })],
      generationId: 5,
    }),
  },
  {
    file: 'consumer-protocol/subscription-v3-000.hex',
    version: 3,
    expected: createConsumerProtocolSubscription({ topics: ['orders', 'audit'], userData: Buffer.alloc(0), ownedPartitions: [], generationId: -1, rackId: 'rack-a' }),
  },
];

const assignments: { file: string; version: number; expected: ConsumerProtocolAssignment }[] = [
  {
    file: 'consumer-protocol/assignment-v0-000.hex',
    version: 0,
    expected: createConsumerProtocolAssignment({
      assignedPartitions: [
        createConsumerProtocolAssignmentTopicPartition({ topic: 'orders', partitions: [0, 2] }),
        createConsumerProtocolAssignmentTopicPartition({ topic: 'audit', partitions: [1] }),
      ],
      userData: Buffer.alloc(0),
    }),
  },
  {
    file: 'consumer-protocol/assignment-v1-000.hex',
    version: 1,
    expected: createConsumerProtocolAssignment({ assignedPartitions: [createConsumerProtocolAssignmentTopicPartition({ topic: 'orders', partitions: [3] })], userData: Buffer.from([1, 2, 3]) }),
  },
  { file: 'consumer-protocol/assignment-v3-000.hex', version: 3, expected: createConsumerProtocolAssignment({ assignedPartitions: [], userData: null }) },
];

describe('ConsumerProtocolSubscription fixtures', () => {
  it.each(subscriptions)('$file decodes into the expected subscription and encodes back byte for byte', ({ file, version, expected }) => {
    const golden = loadGolden(file);
    const { version: v, subscription } = readSubscription(golden);
    expect(v).toBe(version);
    expect(subscription).toEqual(expected);
    expect(hex(writeSubscription(expected, version))).toBe(hex(golden));
  });
});

describe('ConsumerProtocolAssignment fixtures', () => {
  it.each(assignments)('$file decodes into the expected assignment and encodes back byte for byte', ({ file, version, expected }) => {
    const golden = loadGolden(file);
    const { version: v, assignment } = readAssignment(golden);
    expect(v).toBe(version);
    expect(assignment).toEqual(expected);
    expect(hex(writeAssignment(expected, version))).toBe(hex(golden));
  });
});

describe('kafkajs 2.2.4 assigner protocol', () => {
  const { MemberMetadata, MemberAssignment } = kafkajsAssignerProtocol;

  it('writes the same v0 subscription bytes as the codec', () => {
    const theirs = MemberMetadata.encode({ version: 0, topics: ['orders', 'audit'], userData: Buffer.from('ud') });
    expect(hex(theirs)).toBe(hex(loadGolden('consumer-protocol/subscription-v0-000.hex')));
  });

  it('writes empty user data (not null) when none is given', () => {
    const { subscription } = readSubscription(MemberMetadata.encode({ version: 0, topics: ['orders'] }));
    expect(subscription).toEqual(createConsumerProtocolSubscription({ topics: ['orders'], userData: Buffer.alloc(0) }));
  });

  it('writes the same v0 assignment bytes as the codec', () => {
    const theirs = MemberAssignment.encode({ version: 0, assignment: { orders: [0, 2], audit: [1] } });
    expect(hex(theirs)).toBe(hex(loadGolden('consumer-protocol/assignment-v0-000.hex')));
  });

  it.each([1, 2, 3])('writes an assignment labelled v%i that the codec reads at that version (same layout as v0)', (v) => {
    const theirs = MemberAssignment.encode({ version: v, assignment: { orders: [3] }, userData: Buffer.from([1, 2, 3]) });
    const expected = createConsumerProtocolAssignment({ assignedPartitions: [createConsumerProtocolAssignmentTopicPartition({ topic: 'orders', partitions: [3] })], userData: Buffer.from([1, 2, 3]) });
    expect(readAssignment(theirs)).toEqual({ version: v, assignment: expected });
    expect(hex(writeAssignment(expected, v))).toBe(hex(theirs));
  });

  it('writes a subscription labelled v1 with a v0 body, which the codec refuses as truncated', () => {
    const theirs = MemberMetadata.encode({ version: 1, topics: ['orders'] });
    expect(() => readSubscription(theirs)).toThrow(DecodeError);
  });

  it.each(subscriptions)('reads the topics and user data of $file (and nothing newer)', ({ file, version, expected }) => {
    expect(MemberMetadata.decode(loadGolden(file))).toEqual({ version, topics: expected.topics, userData: expected.userData });
  });

  it.each(assignments)('reads $file', ({ file, version, expected }) => {
    const assignment = Object.fromEntries(expected.assignedPartitions.map((tp) => [tp.topic, tp.partitions]));
    expect(MemberAssignment.decode(loadGolden(file))).toEqual({ version, assignment, userData: expected.userData });
  });
});

describe('librdkafka 2.0.2 consumer protocol payloads (captured)', () => {
  function requestBody<T>(file: string, api: { request: { decode(r: Reader, v: number): T } }, version: number): T {
    const frame = loadGolden(file);
    const r = new Reader(frame, 4);
    readRequestHeader(r);
    const body = api.request.decode(r, version);
    r.complete();
    return body;
  }

  it('subscribes with ConsumerProtocolSubscription v1: empty user data, no owned partitions', () => {
    const join = requestBody('captured/librdkafka-2.0.2-join-group-v5-request.hex', JoinGroupApi, 5);
    expect(join.protocols.map((p) => p.name)).toEqual(['range', 'roundrobin']);
    for (const p of join.protocols) {
      expect(readSubscription(p.metadata)).toEqual({
        version: 1,
        subscription: createConsumerProtocolSubscription({ topics: ['golden'], userData: Buffer.alloc(0), ownedPartitions: [] }),
      });
    }
  });

  it('assigns with ConsumerProtocolAssignment v0', () => {
    const sync = requestBody('captured/librdkafka-2.0.2-sync-group-v3-request.hex', SyncGroupApi, 3);
    expect(readAssignment(sync.assignments[0]!.assignment)).toEqual({
      version: 0,
      assignment: createConsumerProtocolAssignment({ assignedPartitions: [createConsumerProtocolAssignmentTopicPartition({ topic: 'golden', partitions: [0] })], userData: Buffer.alloc(0) }),
    });
  });
});

describe('fixture inventory', () => {
  it('has an expectation for every consumer protocol fixture', () => {
    const files = listGoldenFiles().filter((f) => f.startsWith('consumer-protocol/'));
    expect(files.sort()).toEqual([...subscriptions, ...assignments].map((f) => f.file).sort());
  });
});
