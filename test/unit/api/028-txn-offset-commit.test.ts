import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import {
  createOffsetFetchRequest,
  createOffsetFetchRequestGroup,
  createOffsetFetchRequestTopic,
  createOffsetFetchRequestTopics,
  type OffsetFetchResponse,
} from '../../../protocol/messages/009-offset-fetch.gen.js';
import {
  createTxnOffsetCommitRequest,
  createTxnOffsetCommitRequestPartition,
  createTxnOffsetCommitRequestTopic,
  type TxnOffsetCommitResponse,
} from '../../../protocol/messages/028-txn-offset-commit.gen.js';
import { randomUuid } from '../../../protocol/wire/uuid.js';
import { offsetFetch } from '../../../src/api/009-offset-fetch.js';
import { txnOffsetCommit } from '../../../src/api/028-txn-offset-commit.js';
import type { TopicService } from '../../../src/api/services.js';
import { harness, type Harness } from '../coordinator/harness.js';
import { answer, requestContext } from './fakes.js';

const G = 'txn-handler-group';

function services(h: Harness | null) {
  const topics = h?.topics;
  return {
    groups: h?.coordinator as never,
    topics: { get: (n: string) => topics?.get(n), getById: (id: string) => topics?.getById(id) } as unknown as TopicService,
  };
}

function commitRequest(topics: Array<{ name?: string; topicId?: string; partitions: number[] }>) {
  return createTxnOffsetCommitRequest({
    transactionalId: 'tx',
    groupId: G,
    producerId: 11n,
    producerEpoch: 0,
    topics: topics.map((t) =>
      createTxnOffsetCommitRequestTopic({
        ...(t.name !== undefined ? { name: t.name } : {}),
        ...(t.topicId !== undefined ? { topicId: t.topicId } : {}),
        partitions: t.partitions.map((p) => createTxnOffsetCommitRequestPartition({ partitionIndex: p, committedOffset: 40n + BigInt(p) })),
      }),
    ),
  });
}

describe('TxnOffsetCommit handler', () => {
  it('answers COORDINATOR_NOT_AVAILABLE for every partition while the coordinator is not active', async () => {
    const res = await answer<TxnOffsetCommitResponse>(txnOffsetCommit.handle(commitRequest([{ name: 't', partitions: [0, 1] }]), requestContext(services(null), { apiVersion: 3 })));
    expect(res.topics.map((t) => [t.name, t.partitions.map((p) => p.errorCode)])).toEqual([['t', [ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.COORDINATOR_NOT_AVAILABLE]]]);
  });

  it('takes topics by id from v6 and answers by id, UNKNOWN_TOPIC_ID for an id this node does not know', async () => {
    const h = await harness();
    const t = h.topics.add('t', 2);
    const unknownId = randomUuid();
    const res = await answer<TxnOffsetCommitResponse>(
      txnOffsetCommit.handle(commitRequest([{ topicId: t.topicId, partitions: [0] }, { topicId: unknownId, partitions: [0, 1] }]), requestContext(services(h), { apiVersion: 6 })),
    );
    expect(res.topics.map((x) => [x.name, x.topicId, x.partitions.map((p) => p.errorCode)])).toEqual([
      ['', t.topicId, [ErrorCode.NONE]],
      ['', unknownId, [ErrorCode.UNKNOWN_TOPIC_ID, ErrorCode.UNKNOWN_TOPIC_ID]],
    ]);
    await h.coordinator.completeTransaction(h.coordinator.partitionFor(G), 11n, 0, 0, true);
    const f = await h.coordinator.fetchOffsets(createOffsetFetchRequestGroup({ groupId: G, topics: [createOffsetFetchRequestTopics({ name: 't', partitionIndexes: [0] })] }));
    expect(f.topics[0]!.partitions[0]!.committedOffset).toBe(40n);
  });
});

describe('OffsetFetch require_stable', () => {
  it('answers UNSTABLE_OFFSET_COMMIT for a partition with a pending transactional offset, per partition at v7 and v8', async () => {
    const h = await harness();
    h.topics.add('t', 2);
    const committed = await answer<TxnOffsetCommitResponse>(txnOffsetCommit.handle(commitRequest([{ name: 't', partitions: [0] }]), requestContext(services(h), { apiVersion: 3 })));
    expect(committed.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NONE);

    const v7 = await answer<OffsetFetchResponse>(
      offsetFetch.handle(createOffsetFetchRequest({ groupId: G, topics: [createOffsetFetchRequestTopic({ name: 't', partitionIndexes: [0, 1] })], requireStable: true }), requestContext(services(h), { apiVersion: 7 })),
    );
    expect(v7.errorCode).toBe(ErrorCode.NONE);
    expect(v7.topics[0]!.partitions.map((p) => [p.committedOffset, p.errorCode])).toEqual([
      [-1n, ErrorCode.UNSTABLE_OFFSET_COMMIT],
      [-1n, ErrorCode.NONE],
    ]);

    const v8 = await answer<OffsetFetchResponse>(
      offsetFetch.handle(
        createOffsetFetchRequest({ groups: [createOffsetFetchRequestGroup({ groupId: G, topics: [createOffsetFetchRequestTopics({ name: 't', partitionIndexes: [0] })] })], requireStable: true }),
        requestContext(services(h), { apiVersion: 8 }),
      ),
    );
    expect(v8.groups[0]!.errorCode).toBe(ErrorCode.NONE);
    expect(v8.groups[0]!.topics[0]!.partitions.map((p) => p.errorCode)).toEqual([ErrorCode.UNSTABLE_OFFSET_COMMIT]);

    // Without require_stable: the committed value (none yet), no error.
    const plain = await answer<OffsetFetchResponse>(
      offsetFetch.handle(createOffsetFetchRequest({ groupId: G, topics: [createOffsetFetchRequestTopic({ name: 't', partitionIndexes: [0] })] }), requestContext(services(h), { apiVersion: 7 })),
    );
    expect(plain.topics[0]!.partitions.map((p) => [p.committedOffset, p.errorCode])).toEqual([[-1n, ErrorCode.NONE]]);
  });
});
