/** Produce in-process, over fakes of the topics, partitions, metrics and log services. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { createProduceRequest, type ProduceResponse } from '../../../protocol/messages/000-produce.gen.js';
import { ZERO_UUID } from '../../../protocol/wire/uuid.js';
import { produce, verificationError } from '../../../src/api/000-produce.js';
import { NO_RESPONSE } from '../../../src/api/handler.js';
import { buildBatch, producerBatch } from '../log/support.js';
import { FakeTopicsAndPartitions, FakeTxnVerification, fakeCluster, RecordingMetrics, requestContext, topicRecord } from './fakes.js';

let world: FakeTopicsAndPartitions;
let metrics: RecordingMetrics;
let verification: FakeTxnVerification;

beforeEach(async () => {
  world = new FakeTopicsAndPartitions();
  metrics = new RecordingMetrics();
  verification = new FakeTxnVerification();
  mirrored = new Map();
  await world.addTopic(topicRecord('orders', 2));
  await world.addTopic(topicRecord('__consumer_offsets', 1, { internal: true }));
});

afterEach(() => world.close());

let mirrored: Map<string, string>;

function ctx(apiVersion = 9, o: { topics?: typeof world.topicService; cluster?: ReturnType<typeof fakeCluster> } = {}) {
  const mirrors = { refusal: (t: string) => mirrored.get(t) ?? null };
  return requestContext({ topics: o.topics ?? world.topicService, cluster: o.cluster ?? fakeCluster(), partitions: world.partitionService, metrics, log: pino({ level: 'silent' }), txnVerification: verification, mirrors }, { apiVersion });
}

function request(topic: string, partition: number, records: Buffer | null, acks = -1) {
  return createProduceRequest({ acks, timeoutMs: 30_000, topicData: [{ name: topic, topicId: ZERO_UUID, partitionData: [{ index: partition, records }] }] });
}

async function send(req: ReturnType<typeof request>): Promise<ProduceResponse> {
  const res = await produce.handle(req, ctx());
  if (res === NO_RESPONSE) throw new Error('no response');
  return res;
}

describe('Produce handler', () => {
  it('appends a batch to its partition at the log end, answers its base offset and counts it', async () => {
    const first = await send(request('orders', 1, buildBatch(3)));
    expect(first.responses[0]!.partitionResponses[0]).toMatchObject({ index: 1, errorCode: ErrorCode.NONE, baseOffset: 0n, logStartOffset: 0n });
    const second = await send(request('orders', 1, buildBatch(2)));
    expect(second.responses[0]!.partitionResponses[0]).toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: 3n });
    expect(world.partitionService.get('orders', 1)!.log.highWatermark).toBe(5);
    expect(world.partitionService.get('orders', 0)!.log.highWatermark).toBe(0);
    expect(metrics.appends.map((a) => [a.topic, a.records])).toEqual([['orders', 3], ['orders', 2]]);
  });

  it('answers UNKNOWN_TOPIC_OR_PARTITION for a topic or partition the partition service does not serve', async () => {
    const res = await send(request('nope', 0, buildBatch(1)));
    expect(res.responses[0]!.partitionResponses[0]!.errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    const beyond = await send(request('orders', 2, buildBatch(1)));
    expect(beyond.responses[0]!.partitionResponses[0]!.errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    expect(metrics.appends).toEqual([]);
  });

  it('refuses appends to an internal topic with INVALID_TOPIC_EXCEPTION', async () => {
    const res = await send(request('__consumer_offsets', 0, buildBatch(1)));
    expect(res.responses[0]!.partitionResponses[0]).toMatchObject({ errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION, errorMessage: 'Cannot append to internal topic __consumer_offsets' });
  });

  it('answers POLICY_VIOLATION with the reason for a mirror topic, appending nothing', async () => {
    mirrored.set('orders', 'Topic orders is a mirror of topic orders of cluster link east and is read-only until it is promoted or failed over (state mirroring)');
    const res = await send(request('orders', 0, buildBatch(1)));
    expect(res.responses[0]!.partitionResponses[0]).toMatchObject({ errorCode: ErrorCode.POLICY_VIOLATION, errorMessage: mirrored.get('orders') });
    expect(world.partitionService.get('orders', 0)?.log.highWatermark ?? 0).toBe(0);
  });

  it('answers INVALID_REQUIRED_ACKS for acks other than -1, 0 and 1 and appends nothing', async () => {
    const res = await send(request('orders', 0, buildBatch(1), 2));
    expect(res.responses[0]!.partitionResponses[0]!.errorCode).toBe(ErrorCode.INVALID_REQUIRED_ACKS);
    expect(world.partitionService.get('orders', 0)!.log.highWatermark).toBe(0);
  });

  /**
   * A produce of four records to `partition` of orders starts waiting (it asks for the acquisition, or the
   * lookup, as it is handled); `servable()` makes the partition servable at once; a produce of one record
   * follows: it must land after the four.
   */
  async function secondFindsItServable(c: ReturnType<typeof ctx>, partition: number, servable: () => void): Promise<void> {
    const first = produce.handle(request('orders', partition, buildBatch(4)), c);
    servable();
    const second = produce.handle(request('orders', partition, buildBatch(1)), c);
    const [a, b] = (await Promise.all([first, second])) as ProduceResponse[];
    expect(a!.responses[0]!.partitionResponses[0]).toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: 0n });
    expect(b!.responses[0]!.partitionResponses[0]).toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: 4n });
  }

  it('keeps request order on a partition this broker is taking, for a produce that finds it taken already', async () => {
    let owned = false;
    let acquired!: (owned: boolean) => void;
    const cluster = { ...fakeCluster({ owned: () => owned }), acquisition: () => new Promise<boolean>((resolve) => (acquired = resolve)) };
    await secondFindsItServable(ctx(9, { cluster }), 1, () => {
      owned = true;
      acquired(true);
    });
  });

  it('keeps request order on a partition whose topic is being looked up in the store, for a produce that finds it known already', async () => {
    // A member of a cluster named leader of a topic its registry has not caught up with yet (TopicManager.refresh).
    let visible = false;
    let refreshed!: (known: boolean) => void;
    const topics = { ...world.topicService, get: (n: string) => (visible ? world.topicService.get(n) : undefined), refresh: () => new Promise<boolean>((resolve) => (refreshed = resolve)) };
    const late = ctx(9, { topics });
    await secondFindsItServable(late, 0, () => {
      visible = true;
      refreshed(true);
    });
    // Not found in the store either: UNKNOWN_TOPIC_OR_PARTITION, as without the lookup.
    visible = false;
    const absent = produce.handle(request('orders', 0, buildBatch(1)), late);
    refreshed(false);
    expect(((await absent) as ProduceResponse).responses[0]!.partitionResponses[0]!.errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  });

  it('does not answer acks=0, and still appends', async () => {
    expect(await produce.handle(request('orders', 0, buildBatch(4), 0), ctx())).toBe(NO_RESPONSE);
    const log = world.partitionService.get('orders', 0)!.log;
    await expect.poll(() => log.highWatermark, { timeout: 5000 }).toBe(4);
  });

  it('answers CORRUPT_MESSAGE for a batch whose CRC does not match, appending nothing', async () => {
    const batch = buildBatch(2);
    batch[batch.length - 1] ^= 0xff;
    const res = await send(request('orders', 0, batch));
    expect(res.responses[0]!.partitionResponses[0]!.errorCode).toBe(ErrorCode.CORRUPT_MESSAGE);
    expect(world.partitionService.get('orders', 0)!.log.highWatermark).toBe(0);
  });
});

describe('Produce handler: transactional batches', () => {
  function txnRequest(transactionalId: string | null, partition: number, records: Buffer) {
    return { ...request('orders', partition, records), transactionalId };
  }

  it('appends a transactional batch after verifying the partition with the coordinator once per transaction', async () => {
    const first = await send(txnRequest('tx-1', 0, producerBatch(11, 0, 0)));
    expect(first.responses[0]!.partitionResponses[0]).toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: 0n });
    const second = await send(txnRequest('tx-1', 0, producerBatch(11, 0, 2)));
    expect(second.responses[0]!.partitionResponses[0]).toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: 2n });
    expect(verification.calls).toEqual([{ transactionalId: 'tx-1', producerId: 11n, producerEpoch: 0, topic: 'orders', partition: 0, addPartition: false }]);
    const log = world.partitionService.get('orders', 0)!.log;
    expect(log.lastStableOffset).toBe(0);
    expect(log.highWatermark).toBe(4);
  });

  it('Produce v12+ asks the coordinator to add the partition (KIP-890 part 2), older versions to verify it', async () => {
    const res = await produce.handle(txnRequest('tx-2', 1, producerBatch(12, 0, 0)), ctx(12));
    if (res === NO_RESPONSE) throw new Error('no response');
    expect(res.responses[0]!.partitionResponses[0]!.errorCode).toBe(ErrorCode.NONE);
    expect(verification.calls).toEqual([{ transactionalId: 'tx-2', producerId: 12n, producerEpoch: 0, topic: 'orders', partition: 1, addPartition: true }]);
  });

  it('verifies a batch of a newer epoch than the ongoing transaction in the partition, as Kafka checks the epoch too', async () => {
    expect((await send(txnRequest('tx-1', 0, producerBatch(11, 0, 0)))).responses[0]!.partitionResponses[0]!.errorCode).toBe(ErrorCode.NONE);
    verification.answer = ErrorCode.CONCURRENT_TRANSACTIONS;
    const res = await produce.handle(txnRequest('tx-1', 0, producerBatch(11, 1, 0)), ctx(12));
    if (res === NO_RESPONSE) throw new Error('no response');
    expect(res.responses[0]!.partitionResponses[0]!.errorCode).toBe(ErrorCode.CONCURRENT_TRANSACTIONS);
    expect(verification.calls.map((c) => c.producerEpoch)).toEqual([0, 1]);
  });

  it('refuses a transactional batch of a request without a transactional id with TRANSACTIONAL_ID_AUTHORIZATION_FAILED', async () => {
    const res = await send(txnRequest(null, 0, producerBatch(11, 0, 0)));
    expect(res.responses[0]!.partitionResponses[0]!.errorCode).toBe(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    expect(world.partitionService.get('orders', 0)!.log.highWatermark).toBe(0);
  });

  it('answers a failed verification as Kafka translates it, appending nothing', async () => {
    verification.answer = ErrorCode.INVALID_TXN_STATE;
    const notAdded = await send(txnRequest('tx-1', 0, producerBatch(11, 0, 0)));
    expect(notAdded.responses[0]!.partitionResponses[0]).toMatchObject({ errorCode: ErrorCode.INVALID_TXN_STATE, errorMessage: 'Partition was not added to the transaction' });
    verification.answer = ErrorCode.NOT_COORDINATOR;
    const retriable = await send(txnRequest('tx-1', 0, producerBatch(11, 0, 0)));
    expect(retriable.responses[0]!.partitionResponses[0]).toMatchObject({
      errorCode: ErrorCode.NOT_ENOUGH_REPLICAS,
      errorMessage: 'Unable to verify the partition has been added to the transaction. Underlying error: NOT_COORDINATOR',
    });
    verification.answer = ErrorCode.PRODUCER_FENCED;
    expect((await send(txnRequest('tx-1', 0, producerBatch(11, 0, 0)))).responses[0]!.partitionResponses[0]!.errorCode).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
    expect(verificationError(0, ErrorCode.TRANSACTION_ABORTABLE, 10).errorCode).toBe(ErrorCode.INVALID_TXN_STATE);
    expect(verificationError(0, ErrorCode.TRANSACTION_ABORTABLE, 11).errorCode).toBe(ErrorCode.TRANSACTION_ABORTABLE);
    expect(world.partitionService.get('orders', 0)!.log.highWatermark).toBe(0);
    // The sequence checked before the failed verification is forgotten: the retry at sequence 0 appends.
    verification.answer = ErrorCode.NONE;
    expect((await send(txnRequest('tx-1', 0, producerBatch(11, 0, 0)))).responses[0]!.partitionResponses[0]!.errorCode).toBe(ErrorCode.NONE);
  });

  it('keeps request order on a partition while a first transactional batch is being verified', async () => {
    const [a, b] = await Promise.all([send(txnRequest('tx-1', 1, producerBatch(11, 0, 0))), send(request('orders', 1, buildBatch(1)))]);
    expect(a.responses[0]!.partitionResponses[0]!.baseOffset).toBe(0n);
    expect(b.responses[0]!.partitionResponses[0]!.baseOffset).toBe(2n);
  });
});
