/**
 * Transactions in the log over the wire, with a real broker: transactional batches produced with a
 * transactional id, COMMIT/ABORT markers written with WriteTxnMarkers (as a transaction coordinator sends
 * them), and what consumers see: read_committed stops at the last stable offset and gets the aborted
 * transactions, read_uncommitted reads to the high watermark; a read_committed long-poll wakes when a marker
 * moves the last stable offset. All of it survives a SIGKILL and a graceful restart.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../protocol/error-codes.js';
import { FetchApi, type FetchResponse } from '../../protocol/messages/001-fetch.gen.js';
import { ListOffsetsApi } from '../../protocol/messages/002-list-offsets.gen.js';
import { InitProducerIdApi } from '../../protocol/messages/022-init-producer-id.gen.js';
import { AddPartitionsToTxnApi } from '../../protocol/messages/024-add-partitions-to-txn.gen.js';
import { WriteTxnMarkersApi } from '../../protocol/messages/027-write-txn-markers.gen.js';
import { ProduceApi } from '../../protocol/messages/000-produce.gen.js';
import { RecordBatch } from '../../protocol/records/batch.js';
import { buildRecordBatch } from '../../protocol/records/index.js';
import { KafkaClient } from '../../src/client/index.js';
import { BrokerProcess } from '../support/broker-process.js';
import { RawConnection, waitFor } from '../support/raw-connection.js';
import { fetchRequest, produceRequest } from '../support/requests.js';

const TOPIC = 'txn-markers';
const READ_COMMITTED = 1;

describe.sequential('transaction markers over the wire', () => {
  let broker: BrokerProcess;
  let conn: RawConnection;
  let pidA: bigint;
  let pidB: bigint;

  beforeAll(async () => {
    broker = await BrokerProcess.start();
    const client = await KafkaClient.connect({ bootstrap: broker.bootstrap, clientId: 'txn-markers' });
    // Three batches per ledger: the markers seal ledgers, so their aborted transactions go to index ledgers.
    const [created] = await client.createTopics([{ name: TOPIC, numPartitions: 1, configs: { 'ledgerline.segment.entries': '3' } }]);
    expect(created!.errorCode).toBe(0);
    await client.waitForTopics([TOPIC]);
    await client.close();
    conn = await RawConnection.connect(broker.port);
  });

  afterAll(async () => {
    conn?.destroy();
    await broker?.stop();
  });

  /**
   * A transactional producer whose transaction holds the partition, so that Produce's KIP-890 verification passes:
   * InitProducerId for the id (retried while __transaction_state loads), then AddPartitionsToTxn.
   */
  async function producerId(transactionalId: string): Promise<bigint> {
    const init = await waitFor(`InitProducerId ${transactionalId}`, async () => {
      const r = await conn.request(InitProducerIdApi, 4, InitProducerIdApi.request.create({ transactionalId, transactionTimeoutMs: 600_000, producerId: -1n, producerEpoch: -1 }));
      return r.errorCode === ErrorCode.NONE ? r : null;
    });
    const add = await conn.request(AddPartitionsToTxnApi, 3, AddPartitionsToTxnApi.request.create({
      v3AndBelowTransactionalId: transactionalId,
      v3AndBelowProducerId: init.producerId,
      v3AndBelowProducerEpoch: init.producerEpoch,
      v3AndBelowTopics: [{ name: TOPIC, partitions: [0] }],
    }));
    expect(add.resultsByTopicV3AndBelow[0]!.resultsByPartition[0]!.partitionErrorCode).toBe(ErrorCode.NONE);
    return init.producerId;
  }

  async function produce(records: Buffer, transactionalId: string | null): Promise<{ errorCode: number; baseOffset: bigint }> {
    const res = await conn.request(ProduceApi, 9, { ...produceRequest([{ topic: TOPIC, partition: 0, records }]), transactionalId });
    const p = res.responses[0]!.partitionResponses[0]!;
    return { errorCode: p.errorCode, baseOffset: p.baseOffset };
  }

  async function marker(producerId: bigint, commit: boolean, coordinatorEpoch = 0): Promise<number> {
    const res = await conn.request(WriteTxnMarkersApi, 1, {
      markers: [{ producerId, producerEpoch: 0, transactionResult: commit, coordinatorEpoch, transactionVersion: 0, topics: [{ name: TOPIC, partitionIndexes: [0] }] }],
    });
    return res.markers[0]!.topics[0]!.partitions[0]!.errorCode;
  }

  async function fetch(isolationLevel: number, offset = 0n, maxWaitMs = 0, c: RawConnection = conn): Promise<FetchResponse['responses'][0]['partitions'][0]> {
    const res = await c.request(FetchApi, 12, { ...fetchRequest({ topics: [{ topic: TOPIC, partitions: [{ partition: 0, offset }] }], maxWaitMs }), isolationLevel }, maxWaitMs + 10_000);
    return res.responses[0]!.partitions[0]!;
  }

  function baseOffsets(records: Buffer | null): number[] {
    const out: number[] = [];
    for (let pos = 0; records && pos < records.length; ) {
      const size = 12 + records.readInt32BE(pos + 8);
      out.push(RecordBatch.wrap(records.subarray(pos, pos + size)).baseOffsetNumber);
      pos += size;
    }
    return out;
  }

  async function latestCommitted(): Promise<bigint> {
    const res = await conn.request(ListOffsetsApi, 7, ListOffsetsApi.request.create({
      replicaId: -1,
      isolationLevel: READ_COMMITTED,
      topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n, maxNumOffsets: 1 }] }],
    }));
    return res.topics[0]!.partitions[0]!.offset;
  }

  it('refuses a transactional batch without a transactional id, and appends one with it', async () => {
    pidA = await producerId('tx-a');
    pidB = await producerId('tx-b');
    const a = await buildRecordBatch([{ value: 'a0' }, { value: 'a1' }], { producerId: pidA, producerEpoch: 0, baseSequence: 0, isTransactional: true });
    expect((await produce(a, null)).errorCode).toBe(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    expect(await produce(a, 'tx-a')).toEqual({ errorCode: 0, baseOffset: 0n }); // 0-1
    const b = await buildRecordBatch([{ value: 'b0' }, { value: 'b1' }], { producerId: pidB, producerEpoch: 0, baseSequence: 0, isTransactional: true });
    expect(await produce(b, 'tx-b')).toEqual({ errorCode: 0, baseOffset: 2n }); // 2-3
    expect(await produce(await buildRecordBatch([{ value: 'plain' }]), null)).toEqual({ errorCode: 0, baseOffset: 4n }); // 4
  });

  it('stops read_committed at the last stable offset, and returns the aborted transactions once their marker is written', async () => {
    let committed = await fetch(READ_COMMITTED);
    expect(committed.lastStableOffset).toBe(0n);
    expect(committed.highWatermark).toBe(5n);
    expect(baseOffsets(committed.records as Buffer)).toEqual([]);
    expect(await marker(pidA, false)).toBe(ErrorCode.NONE); // 5
    committed = await fetch(READ_COMMITTED);
    expect(committed.lastStableOffset).toBe(2n);
    expect(baseOffsets(committed.records as Buffer)).toEqual([0]);
    expect(committed.abortedTransactions).toEqual([expect.objectContaining({ producerId: pidA, firstOffset: 0n })]);
    expect(await latestCommitted()).toBe(2n);
    const uncommitted = await fetch(0);
    expect(uncommitted.lastStableOffset).toBe(2n);
    expect(baseOffsets(uncommitted.records as Buffer)).toEqual([0, 2, 4, 5]);
  });

  it('wakes a read_committed long-poll when the commit marker moves the last stable offset', async () => {
    const waiter = await RawConnection.connect(broker.port);
    try {
      const started = Date.now();
      const polling = fetch(READ_COMMITTED, 2n, 20_000, waiter);
      // A data batch moves only the high watermark: the poll keeps waiting.
      expect(await produce(await buildRecordBatch([{ value: 'plain-2' }]), null)).toEqual({ errorCode: 0, baseOffset: 6n }); // 6
      expect(await marker(pidB, true)).toBe(ErrorCode.NONE); // 7
      const woke = await polling;
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(woke.lastStableOffset).toBe(8n);
      expect(baseOffsets(woke.records as Buffer)).toEqual([2, 4, 5, 6, 7]);
    } finally {
      waiter.destroy();
    }
  });

  it('refuses a marker of a fenced coordinator epoch per partition', async () => {
    expect(await marker(pidB, true, 3)).toBe(ErrorCode.NONE); // 8: the coordinator epoch is now 3
    expect(await marker(pidB, true, 2)).toBe(ErrorCode.TRANSACTION_COORDINATOR_FENCED);
  });

  it('keeps the last stable offset and the aborted transactions across a SIGKILL and a graceful restart', async () => {
    const before = await fetch(READ_COMMITTED);
    expect(before.highWatermark).toBe(9n);
    for (const restart of ['SIGKILL', 'SIGTERM'] as const) {
      conn.destroy();
      if (restart === 'SIGTERM') await broker.kill('SIGTERM');
      await broker.restart();
      conn = await RawConnection.connect(broker.port);
      const after = await fetch(READ_COMMITTED);
      expect(after.errorCode).toBe(ErrorCode.NONE);
      expect(after.highWatermark).toBe(9n);
      expect(after.lastStableOffset).toBe(9n);
      expect(baseOffsets(after.records as Buffer)).toEqual([0, 2, 4, 5, 6, 7, 8]);
      expect(after.abortedTransactions).toEqual([expect.objectContaining({ producerId: pidA, firstOffset: 0n })]);
      expect((await fetch(0)).abortedTransactions).toBeNull();
      expect(await latestCommitted()).toBe(9n);
      // The coordinator epoch survived with the producer state.
      expect(await marker(pidB, true, 2)).toBe(ErrorCode.TRANSACTION_COORDINATOR_FENCED);
    }
  });
});
