// DescribeTransactions v0 (flexible; KIP-664): each transactional id's state as its coordinator holds it;
// TRANSACTIONAL_ID_NOT_FOUND for an id it does not know, NOT_COORDINATOR for one this broker does not coordinate.
// Authorization as KafkaApis.handleDescribeTransactionsRequest: DESCRIBE on each transactional id
// (TRANSACTIONAL_ID_AUTHORIZATION_FAILED for the others, not asked of the coordinator), and of a transaction's
// partitions only the topics the requester may DESCRIBE are shown.
import { ErrorCode } from '../../protocol/error-codes.js';
import {
  DescribeTransactionsApi,
  createDescribeTransactionsResponse,
  createDescribeTransactionsResponseTopicData,
  createDescribeTransactionsResponseTransactionState,
  type DescribeTransactionsResponseTransactionState,
} from '../../protocol/messages/065-describe-transactions.gen.js';
import { AclOperation, ResourceType } from './access.js';
import { defineHandler } from './handler.js';

export const describeTransactions = defineHandler({
  api: DescribeTransactionsApi,
  uses: ['transactions'],
  versions: { min: 0, max: 0 },
  async handle(req, ctx) {
    const transactionStates: DescribeTransactionsResponseTransactionState[] = [];
    // Id by id, as Kafka: its check, its state, then the check of each of its topics.
    for (const transactionalId of req.transactionalIds) {
      if (!ctx.access.authorize(AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, transactionalId)) {
        transactionStates.push(createDescribeTransactionsResponseTransactionState({ transactionalId, errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED }));
        continue;
      }
      const [d] = await ctx.services.transactions.describeTransactions([transactionalId]);
      transactionStates.push(
        createDescribeTransactionsResponseTransactionState({
          errorCode: d!.errorCode,
          transactionalId: d!.transactionalId,
          transactionState: d!.state,
          transactionTimeoutMs: d!.timeoutMs,
          transactionStartTimeMs: BigInt(d!.startTimeMs),
          producerId: d!.producerId,
          producerEpoch: d!.producerEpoch,
          topics: d!.partitions
            .filter((t) => ctx.access.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, t.topic))
            .map((t) => createDescribeTransactionsResponseTopicData({ topic: t.topic, partitions: t.partitions })),
        }),
      );
    }
    return createDescribeTransactionsResponse({ transactionStates });
  },
});
