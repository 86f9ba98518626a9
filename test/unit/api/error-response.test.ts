import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { DecodeError, LedgerlineError } from '../../../protocol/errors.js';
import { Reader } from '../../../protocol/wire/reader.js';
import { Writer } from '../../../protocol/wire/writer.js';
import { apiErrorOf, errorResponse, type ApiError } from '../../../src/api/error-response.js';
import { NO_RESPONSE } from '../../../src/api/handler.js';
import { handlers } from '../../../src/api/index.js';
import { ClusterApiError } from '../../../src/cluster/errors.js';

const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';
const TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAQ';

/**
 * A request of each served API with two topics of two partitions (or two groups, two resources), and how many
 * places of its error response carry the error code at version v (a field the version lacks decodes as 0).
 */
interface Case {
  request(v: number): Record<string, unknown>;
  places(v: number): number;
}

const twoTopics = <T>(make: (name: string, i: number) => T): T[] => [make('a', 0), make('b', 1)];

const aclFilter = (name: string) => ({ resourceTypeFilter: 2, resourceNameFilter: name, patternTypeFilter: 3, principalFilter: null, hostFilter: null, operation: 1, permissionType: 1 });

const CASES: Record<number, Case> = {
  // DescribeAcls: the top level; CreateAcls: each creation; DeleteAcls: each filter.
  29: { request: () => aclFilter('a'), places: () => 1 },
  30: { request: () => ({ creations: twoTopics((resourceName) => ({ resourceType: 2, resourceName, resourcePatternType: 3, principal: 'User:a', host: '*', operation: 3, permissionType: 3 })) }), places: () => 2 },
  31: { request: () => ({ filters: twoTopics((name) => aclFilter(name)) }), places: () => 2 },
  43: {
    request: () => ({ electionType: 0, timeoutMs: 1000, topicPartitions: twoTopics((topic) => ({ topic, partitions: [0, 1] })) }),
    // Each partition; the top level from v1.
    places: (v) => (v >= 1 ? 5 : 4),
  },
  45: {
    request: () => ({ timeoutMs: 1000, allowReplicationFactorChange: true, topics: twoTopics((name) => ({ name, partitions: [{ partitionIndex: 0, replicas: [1] }, { partitionIndex: 1, replicas: null }] })) }),
    places: () => 5,
  },
  46: { request: () => ({ timeoutMs: 1000, topics: null }), places: () => 1 },
  55: { request: () => ({ topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0 }] }] }), places: () => 1 },
  74: { request: () => ({ resourceTypes: [] }), places: () => 1 },
  75: { request: () => ({ topics: twoTopics((name) => ({ name })), responsePartitionLimit: 10, cursor: null }), places: () => 2 },
  0: {
    request: () => ({ acks: -1, timeoutMs: 1000, topicData: twoTopics((name) => ({ name, partitionData: [{ index: 0, records: null }, { index: 1, records: null }] })) }),
    places: () => 4,
  },
  1: {
    request: (v) => ({
      maxWaitMs: 0, minBytes: 1, maxBytes: 1024, sessionId: v >= 7 ? 5 : 0, sessionEpoch: v >= 7 ? 1 : -1,
      topics: twoTopics((name) => ({ topic: v >= 13 ? '' : name, topicId: v >= 13 ? TOPIC_ID : ZERO_UUID, partitions: [{ partition: 0, fetchOffset: 0n }, { partition: 1, fetchOffset: 0n }] })),
    }),
    // Every partition and, from v7, the top level; from v13 the top level alone.
    places: (v) => (v >= 13 ? 1 : v >= 7 ? 5 : 4),
  },
  2: {
    request: () => ({ replicaId: -1, topics: twoTopics((name) => ({ name, partitions: [{ partitionIndex: 0, timestamp: -1n }, { partitionIndex: 1, timestamp: -2n }] })) }),
    places: () => 4,
  },
  3: { request: (v) => ({ topics: twoTopics((name) => ({ name, topicId: ZERO_UUID })), allowAutoTopicCreation: v >= 4 }), places: () => 2 },
  8: {
    request: (v) => ({ groupId: 'g', generationIdOrMemberEpoch: 1, memberId: 'm', retentionTimeMs: -1n, topics: twoTopics((name) => ({ name, partitions: [{ partitionIndex: 0, committedOffset: 1n, committedMetadata: '' }, { partitionIndex: 1, committedOffset: 1n, committedMetadata: '' }] })), ...(v >= 7 ? { groupInstanceId: null } : {}) }),
    places: () => 4,
  },
  28: {
    request: (v) => ({
      transactionalId: 'tx',
      groupId: 'g',
      producerId: 7n,
      producerEpoch: 0,
      topics: twoTopics((name) => ({
        name: v >= 6 ? '' : name,
        topicId: ZERO_UUID,
        partitions: [{ partitionIndex: 0, committedOffset: 1n, committedMetadata: '' }, { partitionIndex: 1, committedOffset: 1n, committedMetadata: '' }],
      })),
      ...(v >= 3 ? { generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null } : {}),
    }),
    places: () => 4,
  },
  9: {
    request: (v) =>
      v >= 8
        ? { groups: [{ groupId: 'g1', memberId: null, memberEpoch: -1, topics: null }, { groupId: 'g2', memberId: null, memberEpoch: -1, topics: null }] }
        : { groupId: 'g', topics: twoTopics((name) => ({ name, partitionIndexes: [0, 1] })) },
    // v1: each partition; v2-7: the top level; v8+: each group.
    places: (v) => (v >= 8 ? 2 : v >= 2 ? 1 : 4),
  },
  10: { request: (v) => (v >= 4 ? { keyType: 0, coordinatorKeys: ['g1', 'g2'] } : { key: 'g', keyType: 0 }), places: (v) => (v >= 4 ? 2 : 1) },
  11: {
    request: (v) => ({ groupId: 'g', sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000, memberId: '', protocolType: 'consumer', protocols: [{ name: 'range', metadata: Buffer.alloc(0) }], ...(v >= 5 ? { groupInstanceId: null } : {}) }),
    places: () => 1,
  },
  12: { request: () => ({ groupId: 'g', generationId: 1, memberId: 'm' }), places: () => 1 },
  13: { request: (v) => (v >= 3 ? { groupId: 'g', members: [{ memberId: 'm', groupInstanceId: null }] } : { groupId: 'g', memberId: 'm' }), places: () => 1 },
  14: { request: () => ({ groupId: 'g', generationId: 1, memberId: 'm', assignments: [] }), places: () => 1 },
  15: { request: () => ({ groups: ['g1', 'g2'] }), places: () => 2 },
  16: { request: () => ({}), places: () => 1 },
  18: { request: (v) => (v >= 3 ? { clientSoftwareName: 'x', clientSoftwareVersion: '1' } : {}), places: () => 1 },
  19: {
    request: () => ({ topics: twoTopics((name) => ({ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] })), timeoutMs: 1000 }),
    places: () => 2,
  },
  20: {
    request: (v) => (v >= 6 ? { topics: [{ name: 'a', topicId: ZERO_UUID }, { name: null, topicId: TOPIC_ID }], timeoutMs: 1000 } : { topicNames: ['a', 'b'], timeoutMs: 1000 }),
    places: () => 2,
  },
  21: { request: () => ({ topics: twoTopics((name) => ({ name, partitions: [{ partitionIndex: 0, offset: 1n }, { partitionIndex: 1, offset: 1n }] })), timeoutMs: 1000 }), places: () => 4 },
  22: { request: () => ({ transactionalId: null, transactionTimeoutMs: 1000 }), places: () => 1 },
  24: {
    request: (v) =>
      v >= 4
        ? { transactions: [{ transactionalId: 't', producerId: 1n, producerEpoch: 0, verifyOnly: false, topics: [{ name: 'a', partitions: [0, 1] }] }] }
        : { v3AndBelowTransactionalId: 't', v3AndBelowTopics: twoTopics((name) => ({ name, partitions: [0, 1] })) },
    places: (v) => (v >= 4 ? 1 : 4),
  },
  25: { request: () => ({ transactionalId: 't', groupId: 'g' }), places: () => 1 },
  26: { request: () => ({ transactionalId: 't', committed: true }), places: () => 1 },
  65: { request: () => ({ transactionalIds: ['t1', 't2'] }), places: () => 2 },
  66: { request: () => ({ stateFilters: [], producerIdFilters: [] }), places: () => 1 },
  23: { request: () => ({ topics: twoTopics((topic) => ({ topic, partitions: [{ partition: 0, leaderEpoch: 0 }, { partition: 1, leaderEpoch: 0 }] })) }), places: () => 4 },
  32: { request: () => ({ resources: [{ resourceType: 2, resourceName: 'a', configurationKeys: null }, { resourceType: 4, resourceName: '1', configurationKeys: null }] }), places: () => 2 },
  33: { request: () => ({ resources: [{ resourceType: 2, resourceName: 'a', configs: [] }, { resourceType: 2, resourceName: 'b', configs: [] }] }), places: () => 2 },
  35: { request: () => ({ topics: null }), places: (v) => (v >= 3 ? 1 : 0) },
  37: { request: () => ({ topics: twoTopics((name) => ({ name, count: 3, assignments: null })), timeoutMs: 1000 }), places: () => 2 },
  42: { request: () => ({ groupsNames: ['g1', 'g2'] }), places: () => 2 },
  44: { request: () => ({ resources: [{ resourceType: 2, resourceName: 'a', configs: [] }, { resourceType: 2, resourceName: 'b', configs: [] }] }), places: () => 2 },
  47: { request: () => ({ groupId: 'g', topics: twoTopics((name) => ({ name, partitions: [{ partitionIndex: 0 }] })) }), places: () => 1 },
  // DescribeClientQuotas: the top level; AlterClientQuotas: each entry.
  48: { request: () => ({ components: [{ entityType: 'user', matchType: 0, match: 'a' }], strict: false }), places: () => 1 },
  49: { request: () => ({ entries: twoTopics((name) => ({ entity: [{ entityType: 'user', entityName: name }], ops: [{ key: 'producer_byte_rate', value: 1, remove: false }] })), validateOnly: false }), places: () => 2 },
  60: { request: () => ({}), places: () => 1 },
  17: { request: () => ({ mechanism: 'PLAIN' }), places: () => 1 },
  36: { request: () => ({ authBytes: Buffer.alloc(0) }), places: () => 1 },
  // The top level and each user named.
  50: { request: () => ({ users: [{ name: 'a' }, { name: 'b' }] }), places: () => 3 },
  // Each user of the deletions and upsertions, once.
  51: {
    request: () => ({ deletions: [{ name: 'a', mechanism: 1 }], upsertions: [{ name: 'b', mechanism: 2, iterations: 4096, salt: Buffer.alloc(1), saltedPassword: Buffer.alloc(1) }, { name: 'a', mechanism: 2, iterations: 4096, salt: Buffer.alloc(1), saltedPassword: Buffer.alloc(1) }] }),
    places: () => 2,
  },
  61: { request: () => ({ topics: twoTopics((name) => ({ name, partitionIndexes: [0, 1] })) }), places: () => 4 },
  27: {
    request: () => ({
      markers: [{ producerId: 1n, producerEpoch: 0, transactionResult: true, coordinatorEpoch: 0, transactionVersion: 0, topics: twoTopics((name) => ({ name, partitionIndexes: [0, 1] })) }],
    }),
    places: () => 4,
  },
  68: { request: () => ({ groupId: 'g', memberId: 'm', memberEpoch: 0, rebalanceTimeoutMs: 1000, subscribedTopicNames: ['a'], topicPartitions: [] }), places: () => 1 },
  69: { request: () => ({ groupIds: ['g1', 'g2'] }), places: () => 2 },
};

/** Every `errorCode` value anywhere in a decoded message. */
function errorCodes(value: unknown, out: number[] = []): number[] {
  if (Array.isArray(value)) for (const v of value) errorCodes(v, out);
  else if (value !== null && typeof value === 'object' && !Buffer.isBuffer(value)) {
    for (const [k, v] of Object.entries(value)) {
      if ((k === 'errorCode' || k === 'partitionErrorCode') && typeof v === 'number') out.push(v);
      else errorCodes(v, out);
    }
  }
  return out;
}

/** The request of version v: the top level at its defaults with `init` over them (nested parts as given). */
function asRequest(h: (typeof handlers)[number], init: Record<string, unknown>): unknown {
  return h.api.request.create(init as never);
}

const ERROR: ApiError = { code: ErrorCode.KAFKA_STORAGE_ERROR, message: 'Disk failed on ledger 7.' };

describe('error responses', () => {
  it('cover every served API', () => {
    expect(handlers.map((h) => h.api.apiKey).filter((k) => CASES[k] === undefined)).toEqual([]);
  });

  for (const h of handlers) {
    it(`${h.api.name} encodes at every served version and carries the code at each level of the request`, () => {
      const c = CASES[h.api.apiKey]!;
      for (let v = h.advertisedMin ?? h.versions.min; v <= h.versions.max; v++) {
        const request = asRequest(h, c.request(v));
        const res = errorResponse(h.api.apiKey, v, request, ERROR);
        expect(res, `${h.api.name} v${v}`).not.toBe(NO_RESPONSE);
        const w = new Writer();
        h.api.response.encode(w, res as never, v);
        const r = new Reader(w.toBuffer());
        const back = h.api.response.decode(r, v);
        r.complete();
        const codes = errorCodes(back).filter((code) => code !== ErrorCode.NONE);
        expect(codes, `${h.api.name} v${v}`).toEqual(new Array(c.places(v)).fill(ERROR.code));
      }
    });
  }

  it('gives Produce with acks=0 no response, as Kafka does', () => {
    const req = { acks: 0, timeoutMs: 1, topicData: [], transactionalId: null };
    expect(errorResponse(0, 9, req, ERROR)).toBe(NO_RESPONSE);
  });

  it('answers each topic-partition of a Produce once, with offsets unknown and the message from v8', () => {
    const req = {
      acks: -1, timeoutMs: 1, transactionalId: null,
      topicData: [{ name: 'a', partitionData: [{ index: 0, records: null }, { index: 0, records: null }] }, { name: 'a', partitionData: [{ index: 1, records: null }] }],
    };
    const res = errorResponse(0, 9, req, ERROR) as { responses: { name: string; partitionResponses: { index: number; baseOffset: bigint; logStartOffset: bigint; errorMessage: string | null }[] }[] };
    expect(res.responses).toHaveLength(1);
    expect(res.responses[0]!.partitionResponses.map((p) => [p.index, p.baseOffset, p.logStartOffset, p.errorMessage])).toEqual([
      [0, -1n, -1n, ERROR.message],
      [1, -1n, -1n, ERROR.message],
    ]);
  });

  it('echoes the fetch session id and answers a pre-v13 Fetch in every partition with high watermark -1', () => {
    const fetch = handlers.find((h) => h.api.apiKey === 1)!;
    const req = asRequest(fetch, CASES[1]!.request(12));
    const res = errorResponse(1, 12, req, ERROR) as { sessionId: number; errorCode: number; responses: { partitions: { highWatermark: bigint }[] }[] };
    expect(res.sessionId).toBe(5);
    expect(res.responses.flatMap((t) => t.partitions.map((p) => p.highWatermark))).toEqual([-1n, -1n, -1n, -1n]);
  });

  it('lists ApiVersions\' own range with UNSUPPORTED_VERSION (KIP-511)', () => {
    const res = errorResponse(18, 3, {}, { code: ErrorCode.UNSUPPORTED_VERSION, message: null }) as { apiKeys: { apiKey: number }[] };
    expect(res.apiKeys.map((k) => k.apiKey)).toEqual([18]);
    const other = errorResponse(18, 3, {}, ERROR) as { apiKeys: unknown[] };
    expect(other.apiKeys).toEqual([]);
  });

  it('gives FindCoordinator no node and the code\'s default message', () => {
    const res = errorResponse(10, 3, { key: 'g', keyType: 0, coordinatorKeys: [] }, ERROR) as { nodeId: number; host: string; port: number; errorMessage: string | null };
    expect(res).toMatchObject({ nodeId: -1, host: '', port: -1, errorMessage: 'Disk error when trying to access log file on the disk.' });
  });
});

describe('apiErrorOf', () => {
  it('keeps a Ledgerline error\'s own message, as ApiError.fromThrowable does', () => {
    const e = new ClusterApiError(ErrorCode.POLICY_VIOLATION, 'Excessively large number of partitions per request.');
    expect(apiErrorOf(e, ErrorCode.POLICY_VIOLATION)).toEqual({ code: ErrorCode.POLICY_VIOLATION, message: e.message });
  });

  it('shows no message for UNKNOWN_SERVER_ERROR, for a bug, or for a message that is only the code\'s default', () => {
    expect(apiErrorOf(new LedgerlineError('LL_ERR_X', ErrorCode.UNKNOWN_SERVER_ERROR, 'secret path /data/x'), ErrorCode.UNKNOWN_SERVER_ERROR).message).toBeNull();
    expect(apiErrorOf(new TypeError('x is undefined'), ErrorCode.UNKNOWN_SERVER_ERROR).message).toBeNull();
    expect(apiErrorOf(new ClusterApiError(ErrorCode.INVALID_REQUEST, 'This most likely occurs because of a request being malformed by the client library or the message was sent to an incompatible broker. See the broker logs for more details.'), ErrorCode.INVALID_REQUEST).message).toBeNull();
    expect(apiErrorOf(new DecodeError('truncated', 4), ErrorCode.INVALID_REQUEST).message).toBe('truncated at byte 4');
  });
});
