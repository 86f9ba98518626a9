// InitProducerId v0-5 · v2+: flexible · v3: producerId/epoch of an existing producer (KIP-360) · v4: same
// as v3 · v5: PRODUCER_FENCED in place of INVALID_PRODUCER_EPOCH. Idempotent producers only: as Kafka's
// TransactionCoordinator does for a null transactional id, every request gets a fresh producer id with
// epoch 0.
import { ErrorCode } from '../../protocol/error-codes.js';
import { InitProducerIdApi, createInitProducerIdResponse } from '../../protocol/messages/022-init-producer-id.gen.js';
import { defineHandler } from './handler.js';

export const initProducerId = defineHandler({
  api: InitProducerIdApi,
  uses: ['producerIds'],
  versions: { min: 0, max: 5 },
  async handle(req, ctx) {
    if (req.transactionalId !== null) {
      // Transactions are not served yet: refuse with an error the clients treat as fatal rather than
      // one they would retry until they time out. Clients then say "see the broker logs": the reason is
      // logged there once (ctx.refuse).
      ctx.refuse(`transactions are not supported yet: transactional.id ${JSON.stringify(req.transactionalId)} refused; unset transactional.id for an idempotent producer`);
      return createInitProducerIdResponse({ errorCode: ErrorCode.INVALID_REQUEST, producerId: -1n, producerEpoch: -1 });
    }
    const producerId = await ctx.services.producerIds.allocate();
    return createInitProducerIdResponse({ producerId, producerEpoch: 0 });
  },
});
