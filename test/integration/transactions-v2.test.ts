/**
 * Transaction version 2 (KIP-890 part 2) over the wire, with a real broker: ApiVersions finalizes
 * transaction.version 2; a transactional Produce v12 with no AddPartitionsToTxn adds its partition to the
 * transaction; EndTxn v5 bumps the epoch, its retry gets the same answer, the markers carry the bumped epoch,
 * the next transaction runs at it from sequence 0, and a late batch of the old epoch is fenced.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../protocol/error-codes.js';
import { ProduceApi } from '../../protocol/messages/000-produce.gen.js';
import { FetchApi } from '../../protocol/messages/001-fetch.gen.js';
import { ApiVersionsApi } from '../../protocol/messages/018-api-versions.gen.js';
import { InitProducerIdApi } from '../../protocol/messages/022-init-producer-id.gen.js';
import { EndTxnApi } from '../../protocol/messages/026-end-txn.gen.js';
import { DescribeTransactionsApi } from '../../protocol/messages/065-describe-transactions.gen.js';
import { RecordBatch } from '../../protocol/records/batch.js';
import { buildRecordBatch } from '../../protocol/records/index.js';
import { KafkaClient } from '../../src/client/index.js';
import { BrokerProcess } from '../support/broker-process.js';
import { RawConnection, waitFor } from '../support/raw-connection.js';
import { fetchRequest, produceRequest } from '../support/requests.js';

const TOPIC = 'txn-v2';
const TXN_ID = 'tx-v2';
const READ_COMMITTED = 1;

describe.sequential('transaction version 2 on a real broker', () => {
  let broker: BrokerProcess;
  let conn: RawConnection;
  let producerId = -1n;

  beforeAll(async () => {
    broker = await BrokerProcess.start({ configs: { 'transaction.state.log.num.partitions': '3' } });
    const client = await KafkaClient.connect({ bootstrap: broker.bootstrap, clientId: 'txn-v2' });
    const [created] = await client.createTopics([{ name: TOPIC, numPartitions: 1 }]);
    expect(created!.errorCode).toBe(0);
    await client.waitForTopics([TOPIC]);
    await client.close();
    conn = await RawConnection.connect(broker.port);
  });

  afterAll(async () => {
    conn?.destroy();
    await broker?.stop();
  });

  async function produce(epoch: number, baseSequence: number, value: string): Promise<number> {
    const records = await buildRecordBatch([{ value }], { producerId, producerEpoch: epoch, baseSequence, isTransactional: true });
    const res = await conn.request(ProduceApi, 12, { ...produceRequest([{ topic: TOPIC, partition: 0, records }]), transactionalId: TXN_ID });
    return res.responses[0]!.partitionResponses[0]!.errorCode;
  }

  const state = async () => (await conn.request(DescribeTransactionsApi, 0, { transactionalIds: [TXN_ID] })).transactionStates[0]!;

  it('finalizes transaction.version 2, as Kafka 4.4 does', async () => {
    const res = await conn.request(ApiVersionsApi, 4, ApiVersionsApi.request.create({ clientSoftwareName: 'test', clientSoftwareVersion: '1' }));
    expect(res.finalizedFeatures.find((f) => f.name === 'transaction.version')).toMatchObject({ minVersionLevel: 2, maxVersionLevel: 2 });
    expect(res.supportedFeatures.find((f) => f.name === 'transaction.version')).toMatchObject({ minVersion: 0, maxVersion: 2 });
    expect(res.apiKeys.find((k) => k.apiKey === EndTxnApi.apiKey)).toMatchObject({ maxVersion: 5 });
  });

  it('Produce v12 adds the partition to the transaction; EndTxn v5 commits with a bumped epoch, a retry answered alike', async () => {
    await waitFor('InitProducerId', async () => {
      const init = await conn.request(InitProducerIdApi, 5, InitProducerIdApi.request.create({ transactionalId: TXN_ID, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 }));
      producerId = init.producerId;
      return init.errorCode === ErrorCode.NONE || null;
    });
    expect(await produce(0, 0, 'one')).toBe(ErrorCode.NONE);
    expect(await state()).toMatchObject({ transactionState: 'Ongoing', topics: [{ topic: TOPIC, partitions: [0] }] });
    const end = await conn.request(EndTxnApi, 5, { transactionalId: TXN_ID, producerId, producerEpoch: 0, committed: true });
    expect(end).toMatchObject({ errorCode: ErrorCode.NONE, producerId, producerEpoch: 1 });
    await waitFor('CompleteCommit', async () => (await state()).transactionState === 'CompleteCommit' || null);
    const retry = await conn.request(EndTxnApi, 5, { transactionalId: TXN_ID, producerId, producerEpoch: 0, committed: true });
    expect(retry).toMatchObject({ errorCode: ErrorCode.NONE, producerId, producerEpoch: 1 });
  });

  it('the next transaction runs at the bumped epoch from sequence 0; a late batch of the old epoch is fenced', async () => {
    expect(await produce(0, 1, 'zombie')).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
    expect(await produce(1, 0, 'two')).toBe(ErrorCode.NONE);
    const abort = await conn.request(EndTxnApi, 5, { transactionalId: TXN_ID, producerId, producerEpoch: 1, committed: false });
    expect(abort).toMatchObject({ errorCode: ErrorCode.NONE, producerId, producerEpoch: 2 });
    await waitFor('CompleteAbort', async () => (await state()).transactionState === 'CompleteAbort' || null);
    // read_committed sees the committed record only; the markers carry the bumped epochs.
    const res = await conn.request(FetchApi, 12, { ...fetchRequest({ topics: [{ topic: TOPIC, partitions: [{ partition: 0, offset: 0n }] }] }), isolationLevel: READ_COMMITTED });
    const p = res.responses[0]!.partitions[0]!;
    expect(p.abortedTransactions).toEqual([{ producerId, firstOffset: 2n }]);
    const batches: RecordBatch[] = [];
    const records = p.records!;
    for (let buf = Buffer.isBuffer(records) ? records : Buffer.concat(records); buf.length > 0; ) {
      const size = 12 + buf.readInt32BE(8);
      batches.push(RecordBatch.wrap(buf.subarray(0, size)));
      buf = buf.subarray(size);
    }
    expect(batches.map((b) => [b.isControl, b.producerEpoch])).toEqual([
      [false, 0],
      [true, 1],
      [false, 1],
      [true, 2],
    ]);
  });
});
