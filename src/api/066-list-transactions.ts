// ListTransactions v0-2 (flexible; KIP-664) · v1: DurationFilter, transactions running longer than it (KIP-994)
// · v2: TransactionalIdPattern, a regular expression the whole id must match (KIP-1152; INVALID_REGULAR_EXPRESSION
// when it does not compile). State filters Kafka does not know are returned in unknownStateFilters.
// Authorization as KafkaApis.handleListTransactionsRequest: only the transactional ids the requester may
// DESCRIBE are listed, the others left out without an error.
import { ListTransactionsApi, createListTransactionsResponse, createListTransactionsResponseTransactionState } from '../../protocol/messages/066-list-transactions.gen.js';
import { AclOperation, ResourceType } from './access.js';
import { defineHandler } from './handler.js';

export const listTransactions = defineHandler({
  api: ListTransactionsApi,
  uses: ['transactions'],
  versions: { min: 0, max: 2 },
  async handle(req, ctx) {
    const v = ctx.apiVersion;
    const r = await ctx.services.transactions.listTransactions({
      states: req.stateFilters,
      producerIds: req.producerIdFilters,
      durationMs: v >= 1 ? Number(req.durationFilter) : -1,
      transactionalIdPattern: v >= 2 ? req.transactionalIdPattern : null,
    });
    return createListTransactionsResponse({
      errorCode: r.errorCode,
      unknownStateFilters: r.unknownStateFilters,
      transactionStates: r.transactions
        .filter((t) => ctx.access.authorize(AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, t.transactionalId))
        .map((t) => createListTransactionsResponseTransactionState({ transactionalId: t.transactionalId, producerId: t.producerId, transactionState: t.state })),
    });
  },
});
