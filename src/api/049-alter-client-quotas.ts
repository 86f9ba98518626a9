// AlterClientQuotas v0-1 (KIP-546; v1 flexible): sets and removes client quota values of user, client-id,
// user+client-id and ip entities in the metadata store, with ClientQuotaControlManager's validation and
// per-entity results (src/quota/quota-store.ts); `validateOnly` checks without changing anything. One result
// per distinct entity, its types as Kafka's HashMap of the request's entity holds them. Any broker serves it
// (Kafka's brokers forward it to the controller; here the store is shared) and every broker's quota managers
// follow the change.
//
// More than 10,000 changed values fail the whole request (QuorumController's POLICY_VIOLATION, thrown to the
// dispatch seam, whose error response carries it for every entry).
//
// Authorization (ControllerApis.handleAlterClientQuotas): ALTER_CONFIGS on the cluster, else the error
// response: CLUSTER_AUTHORIZATION_FAILED with its default message for every entry.
import { ErrorCode } from '../../protocol/error-codes.js';
import { AlterClientQuotasApi, createAlterClientQuotasResponse, type AlterClientQuotasResponse } from '../../protocol/messages/049-alter-client-quotas.gen.js';
import { AclOperation } from './access.js';
import { errorResponse } from './error-response.js';
import { defineHandler } from './handler.js';

export const alterClientQuotas = defineHandler({
  api: AlterClientQuotasApi,
  uses: ['quotas'],
  versions: { min: 0, max: 1 },
  async handle(req, ctx) {
    if (!ctx.access.authorizeCluster(AclOperation.ALTER_CONFIGS)) {
      return errorResponse(AlterClientQuotasApi.apiKey, ctx.apiVersion, req, { code: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, message: null }) as AlterClientQuotasResponse;
    }
    const results = await ctx.services.quotas.alter(req.entries, req.validateOnly);
    return createAlterClientQuotasResponse({
      entries: results.map((r) => ({ errorCode: r.errorCode, errorMessage: r.errorMessage, entity: r.entity.map((c) => ({ entityType: c.entityType, entityName: c.entityName })) })),
    });
  },
});
