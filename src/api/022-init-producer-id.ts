// InitProducerId v0-6 · v2+: flexible · v3: producerId/epoch of an existing producer (KIP-360) · v4:
// PRODUCER_FENCED in place of INVALID_PRODUCER_EPOCH (KIP-588) · v5: TRANSACTION_ABORTABLE (KIP-890) · v6:
// two-phase commit flags and the ongoing transaction's producer id and epoch (KIP-939), not read here.
// Idempotent producers (null transactional id): as Kafka's TransactionCoordinator does, every request gets a
// fresh producer id with epoch 0. Transactional producers: the transaction coordinator (src/coordinator/txn/)
// of the id gives the producer id and epoch (new id, epoch bump, fencing, an ongoing transaction aborted first).
// Authorization first, as KafkaApis.handleInitProducerIdRequest: WRITE on the transactional id (and, for a v6
// two-phase-commit producer, TWO_PHASE_COMMIT: KIP-939), else TRANSACTIONAL_ID_AUTHORIZATION_FAILED; an
// idempotent producer needs IDEMPOTENT_WRITE on the cluster (a denial not logged) or WRITE on some topic
// (KIP-679), else CLUSTER_AUTHORIZATION_FAILED.
import { ErrorCode } from '../../protocol/error-codes.js';
import { InitProducerIdApi, createInitProducerIdResponse, type InitProducerIdResponse } from '../../protocol/messages/022-init-producer-id.gen.js';
import { AclOperation, ResourceType } from './access.js';
import { errorResponse } from './error-response.js';
import { defineHandler } from './handler.js';

export const initProducerId = defineHandler({
  api: InitProducerIdApi,
  uses: ['producerIds', 'transactions'],
  versions: { min: 0, max: 6 },
  async handle(req, ctx) {
    const refused = (code: number): InitProducerIdResponse => errorResponse(InitProducerIdApi.apiKey, ctx.apiVersion, req, { code, message: null }) as InitProducerIdResponse;
    if (req.transactionalId !== null) {
      if (!ctx.access.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, req.transactionalId)) return refused(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
      if (req.enable2Pc && !ctx.access.authorize(AclOperation.TWO_PHASE_COMMIT, ResourceType.TRANSACTIONAL_ID, req.transactionalId)) return refused(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    } else if (!ctx.access.authorizeCluster(AclOperation.IDEMPOTENT_WRITE, { logIfDenied: false }) && !ctx.access.authorizeByResourceType(AclOperation.WRITE, ResourceType.TOPIC)) {
      return refused(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    }
    if (req.transactionalId === null) {
      const producerId = await ctx.services.producerIds.allocate();
      return createInitProducerIdResponse({ producerId, producerEpoch: 0 });
    }
    const v = ctx.apiVersion;
    if (req.transactionalId === '') {
      // Kafka's TransactionCoordinator: INVALID_REQUEST, which clients report as "see the broker logs".
      ctx.refuse('InitProducerId with an empty transactional id: unset transactional.id for an idempotent producer, or give it a value');
      return createInitProducerIdResponse({ errorCode: ErrorCode.INVALID_REQUEST, producerId: -1n, producerEpoch: -1 });
    }
    // KafkaApis: a producer id without an epoch (or the other way round) is INVALID_REQUEST.
    const noId = req.producerId === -1n;
    const noEpoch = req.producerEpoch === -1;
    if (v >= 3 && noId !== noEpoch) return createInitProducerIdResponse({ errorCode: ErrorCode.INVALID_REQUEST, producerId: -1n, producerEpoch: -1 });
    const expected = v >= 3 && !noId ? { producerId: req.producerId, producerEpoch: req.producerEpoch } : null;
    const r = await ctx.services.transactions.initProducerId(req.transactionalId, req.transactionTimeoutMs, expected);
    // Kafka: versions before 4 do not know PRODUCER_FENCED.
    const errorCode = v < 4 && r.errorCode === ErrorCode.PRODUCER_FENCED ? ErrorCode.INVALID_PRODUCER_EPOCH : r.errorCode;
    return createInitProducerIdResponse({ errorCode, producerId: r.producerId, producerEpoch: r.producerEpoch });
  },
});
