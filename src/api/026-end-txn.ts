// EndTxn v0-5 · v2: PRODUCER_FENCED (KIP-588; INVALID_PRODUCER_EPOCH before) · v3+: flexible · v4:
// TRANSACTION_ABORTABLE (KIP-890) · v5: transaction version 2 (KIP-890 part 2): the coordinator bumps the
// epoch at every end and answers the producer id and epoch to go on with (Kafka takes the client's transaction
// version from the request's: 2 for v5, 0 below). Answered once PrepareCommit/PrepareAbort is durable; the
// markers follow (src/coordinator/txn/markers.ts). WRITE on the transactional id first, as
// KafkaApis.handleEndTxnRequest: TRANSACTIONAL_ID_AUTHORIZATION_FAILED otherwise (producer id and epoch -1).
import { ErrorCode } from '../../protocol/error-codes.js';
import { EndTxnApi, createEndTxnResponse } from '../../protocol/messages/026-end-txn.gen.js';
import { AclOperation, ResourceType } from './access.js';
import { defineHandler } from './handler.js';

export const endTxn = defineHandler({
  api: EndTxnApi,
  uses: ['transactions'],
  versions: { min: 0, max: 5 },
  async handle(req, ctx) {
    if (!ctx.access.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, req.transactionalId)) return createEndTxnResponse({ errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED });
    if (ctx.apiVersion >= 5) return createEndTxnResponse(await ctx.services.transactions.endTxnV2(req.transactionalId, req.producerId, req.producerEpoch, req.committed));
    const code = await ctx.services.transactions.endTxn(req.transactionalId, req.producerId, req.producerEpoch, req.committed);
    return createEndTxnResponse({ errorCode: ctx.apiVersion < 2 && code === ErrorCode.PRODUCER_FENCED ? ErrorCode.INVALID_PRODUCER_EPOCH : code });
  },
});
