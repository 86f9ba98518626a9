/**
 * The transaction coordinator in a real broker: FindCoordinator for a transactional id, InitProducerId,
 * AddPartitionsToTxn, AddOffsetsToTxn and EndTxn over the wire, DescribeTransactions and ListTransactions, and
 * the state in __transaction_state surviving a SIGKILL: the commit decision (PrepareCommit, or CompleteCommit
 * once the reloaded coordinator has written its markers), never an abort.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../protocol/error-codes.js';
import { FindCoordinatorApi } from '../../protocol/messages/010-find-coordinator.gen.js';
import { InitProducerIdApi } from '../../protocol/messages/022-init-producer-id.gen.js';
import { AddPartitionsToTxnApi } from '../../protocol/messages/024-add-partitions-to-txn.gen.js';
import { AddOffsetsToTxnApi } from '../../protocol/messages/025-add-offsets-to-txn.gen.js';
import { EndTxnApi } from '../../protocol/messages/026-end-txn.gen.js';
import { DescribeTransactionsApi } from '../../protocol/messages/065-describe-transactions.gen.js';
import { ListTransactionsApi } from '../../protocol/messages/066-list-transactions.gen.js';
import { KafkaClient } from '../../src/client/index.js';
import { BrokerProcess } from '../support/broker-process.js';
import { RawConnection, waitFor } from '../support/raw-connection.js';

const TOPIC = 'txn-orders';

describe.sequential('transactions on a real broker', () => {
  let broker: BrokerProcess;
  let conn: RawConnection;
  let producerId = -1n;

  beforeAll(async () => {
    broker = await BrokerProcess.start({ configs: { 'transaction.state.log.num.partitions': '5' } });
    const client = await KafkaClient.connect({ bootstrap: broker.bootstrap, clientId: 'txn-test' });
    const [created] = await client.createTopics([{ name: TOPIC, numPartitions: 2 }]);
    expect(created!.errorCode).toBe(0);
    await client.waitForTopics([TOPIC]);
    await client.close();
    conn = await RawConnection.connect(broker.port);
  });

  afterAll(async () => {
    conn?.destroy();
    await broker?.stop();
  });

  const describeTxn = async (id: string) => (await conn.request(DescribeTransactionsApi, 0, { transactionalIds: [id] })).transactionStates[0]!;

  it('finds this broker as the coordinator of a transactional id', async () => {
    const r = await conn.request(FindCoordinatorApi, 4, FindCoordinatorApi.request.create({ keyType: 1, coordinatorKeys: ['tx-app'] }));
    expect(r.coordinators[0]).toMatchObject({ key: 'tx-app', errorCode: ErrorCode.NONE, port: broker.port });
  });

  it('runs InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn and EndTxn, answering each as Kafka does', async () => {
    const init = await conn.request(InitProducerIdApi, 4, InitProducerIdApi.request.create({ transactionalId: 'tx-app', transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 }));
    expect(init.errorCode).toBe(ErrorCode.NONE);
    expect(init.producerEpoch).toBe(0);
    producerId = init.producerId;
    const tooLong = await conn.request(InitProducerIdApi, 4, InitProducerIdApi.request.create({ transactionalId: 'tx-other', transactionTimeoutMs: 900_001, producerId: -1n, producerEpoch: -1 }));
    expect(tooLong.errorCode).toBe(ErrorCode.INVALID_TRANSACTION_TIMEOUT);
    const add = await conn.request(AddPartitionsToTxnApi, 3, AddPartitionsToTxnApi.request.create({
      v3AndBelowTransactionalId: 'tx-app', v3AndBelowProducerId: producerId, v3AndBelowProducerEpoch: 0,
      v3AndBelowTopics: [{ name: TOPIC, partitions: [0, 1] }],
    }));
    expect(add.resultsByTopicV3AndBelow[0]!.resultsByPartition.map((p) => p.partitionErrorCode)).toEqual([ErrorCode.NONE, ErrorCode.NONE]);
    const unknown = await conn.request(AddPartitionsToTxnApi, 3, AddPartitionsToTxnApi.request.create({
      v3AndBelowTransactionalId: 'tx-app', v3AndBelowProducerId: producerId, v3AndBelowProducerEpoch: 0,
      v3AndBelowTopics: [{ name: TOPIC, partitions: [7] }],
    }));
    expect(unknown.resultsByTopicV3AndBelow[0]!.resultsByPartition[0]!.partitionErrorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    const offsets = await conn.request(AddOffsetsToTxnApi, 3, { transactionalId: 'tx-app', producerId, producerEpoch: 0, groupId: 'txn-group' });
    expect(offsets.errorCode).toBe(ErrorCode.NONE);
    const fenced = await conn.request(EndTxnApi, 3, { transactionalId: 'tx-app', producerId, producerEpoch: 1, committed: true });
    expect(fenced.errorCode).toBe(ErrorCode.PRODUCER_FENCED);
    const described = await describeTxn('tx-app');
    expect(described).toMatchObject({ errorCode: ErrorCode.NONE, transactionState: 'Ongoing', producerId, producerEpoch: 0, transactionTimeoutMs: 60_000 });
    expect(described.topics.map((t) => t.topic).sort()).toEqual(['__consumer_offsets', TOPIC]);
    const end = await conn.request(EndTxnApi, 3, { transactionalId: 'tx-app', producerId, producerEpoch: 0, committed: true });
    expect(end.errorCode).toBe(ErrorCode.NONE);
    // Kafka answers once PrepareCommit is written; this broker once the markers and CompleteCommit are written
    // too, or after END_TXN_COMPLETION_WAIT_MS (20 ms) if they are not, so it is complete by now or soon.
    await waitFor('the completed transaction', async () => ((await describeTxn('tx-app')).transactionState === 'CompleteCommit' ? true : null));
    const retried = await conn.request(EndTxnApi, 3, { transactionalId: 'tx-app', producerId, producerEpoch: 0, committed: true });
    expect(retried.errorCode).toBe(ErrorCode.NONE);
    const opposite = await conn.request(EndTxnApi, 3, { transactionalId: 'tx-app', producerId, producerEpoch: 0, committed: false });
    expect(opposite.errorCode).toBe(ErrorCode.INVALID_TXN_STATE);
  });

  it('keeps the transaction state across a SIGKILL', async () => {
    conn.destroy();
    await broker.restart();
    conn = await RawConnection.connect(broker.port);
    const described = await waitFor('the reloaded transaction', async () => {
      const d = await describeTxn('tx-app');
      return d.errorCode === ErrorCode.NONE ? d : null;
    });
    // The commit decision survives the kill. The reloaded coordinator goes on writing the markers (Kafka's
    // TransactionStateManager reload resends them), so the transaction may already have completed by now.
    expect(described).toMatchObject({ producerId, producerEpoch: 0 });
    expect(['PrepareCommit', 'CompleteCommit']).toContain(described.transactionState);
    const listed = await conn.request(ListTransactionsApi, 1, ListTransactionsApi.request.create({ stateFilters: ['PrepareCommit', 'CompleteCommit'], producerIdFilters: [], durationFilter: -1n }));
    expect(listed.errorCode).toBe(ErrorCode.NONE);
    expect(listed.transactionStates).toHaveLength(1);
    expect(listed.transactionStates[0]).toMatchObject({ transactionalId: 'tx-app', producerId });
    expect(['PrepareCommit', 'CompleteCommit']).toContain(listed.transactionStates[0]!.transactionState);
    const aborts = await conn.request(ListTransactionsApi, 1, ListTransactionsApi.request.create({ stateFilters: ['PrepareAbort', 'CompleteAbort', 'Ongoing'], producerIdFilters: [], durationFilter: -1n }));
    expect(aborts.transactionStates).toEqual([]);
  });
});
