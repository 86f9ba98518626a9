// AddOffsetsToTxn v0-4 · v2: PRODUCER_FENCED (KIP-588; INVALID_PRODUCER_EPOCH before) · v3+: flexible · v4:
// TRANSACTION_ABORTABLE (KIP-890). Adds the group's __consumer_offsets partition to the transaction, so that
// its TxnOffsetCommit offsets are committed or aborted with it (KIP-98, KIP-447). Authorization as
// KafkaApis.handleAddOffsetsToTxnRequest: WRITE on the transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED),
// then READ on the group (GROUP_AUTHORIZATION_FAILED).
import { ErrorCode } from '../../protocol/error-codes.js';
import { AddOffsetsToTxnApi, createAddOffsetsToTxnResponse } from '../../protocol/messages/025-add-offsets-to-txn.gen.js';
import { AclOperation, ResourceType } from './access.js';
import { defineHandler } from './handler.js';

export const addOffsetsToTxn = defineHandler({
  api: AddOffsetsToTxnApi,
  uses: ['transactions'],
  versions: { min: 0, max: 4 },
  async handle(req, ctx) {
    if (!ctx.access.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, req.transactionalId)) return createAddOffsetsToTxnResponse({ errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED });
    if (!ctx.access.authorize(AclOperation.READ, ResourceType.GROUP, req.groupId)) return createAddOffsetsToTxnResponse({ errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED });
    const code = await ctx.services.transactions.addOffsetsToTxn(req.transactionalId, req.producerId, req.producerEpoch, req.groupId);
    return createAddOffsetsToTxnResponse({ errorCode: ctx.apiVersion < 2 && code === ErrorCode.PRODUCER_FENCED ? ErrorCode.INVALID_PRODUCER_EPOCH : code });
  },
});
