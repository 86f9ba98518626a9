// DescribeTransactions v0 (flexible; KIP-664): each transactional id's state as its coordinator holds it;
// TRANSACTIONAL_ID_NOT_FOUND for an id it does not know, NOT_COORDINATOR for one this broker does not coordinate.
import { DescribeTransactionsApi, createDescribeTransactionsResponse, createDescribeTransactionsResponseTopicData, createDescribeTransactionsResponseTransactionState } from '../../protocol/messages/065-describe-transactions.gen.js';
import { defineHandler } from './handler.js';

export const describeTransactions = defineHandler({
  api: DescribeTransactionsApi,
  uses: ['transactions'],
  versions: { min: 0, max: 0 },
  async handle(req, ctx) {
    const described = await ctx.services.transactions.describeTransactions(req.transactionalIds);
    return createDescribeTransactionsResponse({
      transactionStates: described.map((d) =>
        createDescribeTransactionsResponseTransactionState({
          errorCode: d.errorCode,
          transactionalId: d.transactionalId,
          transactionState: d.state,
          transactionTimeoutMs: d.timeoutMs,
          transactionStartTimeMs: BigInt(d.startTimeMs),
          producerId: d.producerId,
          producerEpoch: d.producerEpoch,
          topics: d.partitions.map((t) => createDescribeTransactionsResponseTopicData({ topic: t.topic, partitions: t.partitions })),
        }),
      ),
    });
  },
});
