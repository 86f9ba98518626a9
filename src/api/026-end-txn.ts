// EndTxn v0-4 · v2: PRODUCER_FENCED (KIP-588; INVALID_PRODUCER_EPOCH before) · v3+: flexible · v4:
// TRANSACTION_ABORTABLE (KIP-890). v5 (an epoch bump at every transaction end, KIP-890 part 2) is not served:
// this coordinator runs transaction version 1, under which clients end transactions with v4 or below.
// Answered once PrepareCommit/PrepareAbort is durable; the markers follow (src/coordinator/txn/markers.ts).
import { ErrorCode } from '../../protocol/error-codes.js';
import { EndTxnApi, createEndTxnResponse } from '../../protocol/messages/026-end-txn.gen.js';
import { defineHandler } from './handler.js';

export const endTxn = defineHandler({
  api: EndTxnApi,
  uses: ['transactions'],
  versions: { min: 0, max: 4 },
  async handle(req, ctx) {
    const code = await ctx.services.transactions.endTxn(req.transactionalId, req.producerId, req.producerEpoch, req.committed);
    return createEndTxnResponse({ errorCode: ctx.apiVersion < 2 && code === ErrorCode.PRODUCER_FENCED ? ErrorCode.INVALID_PRODUCER_EPOCH : code });
  },
});
