// DescribeClientQuotas v0-1 (KIP-546; v1 flexible): the client quotas whose entity matches a filter, from the
// metadata store (src/quota/quota-store.ts, Kafka's ClientQuotasImage.describe): EXACT, DEFAULT and
// SPECIFIED components, `strict` excluding entities with other types. Served by every broker from its copy,
// as Kafka's brokers answer it from their metadata cache. `kafka-configs --describe --entity-type users
// --entity-type clients` and Admin.describeClientQuotas send it.
//
// A filter Kafka refuses (an empty, repeated or unknown entity type, a match string where the match type
// takes none, ip with user or client-id) is the error response: the code and message at the top level,
// entries null (Kafka throws and answers with getErrorResponse). On success the error message is "", as
// Kafka's response data leaves it.
//
// Authorization (KafkaApis.handleDescribeClientQuotasRequest): DESCRIBE_CONFIGS on the cluster, else
// CLUSTER_AUTHORIZATION_FAILED in the error response.
import { ErrorCode } from '../../protocol/error-codes.js';
import { DescribeClientQuotasApi, createDescribeClientQuotasResponse, type DescribeClientQuotasResponse } from '../../protocol/messages/048-describe-client-quotas.gen.js';
import { AclOperation } from './access.js';
import { errorResponse } from './error-response.js';
import { defineHandler } from './handler.js';

export const describeClientQuotas = defineHandler({
  api: DescribeClientQuotasApi,
  uses: ['quotas'],
  versions: { min: 0, max: 1 },
  handle(req, ctx) {
    if (!ctx.access.authorizeCluster(AclOperation.DESCRIBE_CONFIGS)) {
      return errorResponse(DescribeClientQuotasApi.apiKey, ctx.apiVersion, req, { code: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, message: null }) as DescribeClientQuotasResponse;
    }
    const r = ctx.services.quotas.describe(req.components, req.strict);
    if (r.entries === null) {
      return errorResponse(DescribeClientQuotasApi.apiKey, ctx.apiVersion, req, { code: r.errorCode, message: r.errorMessage }) as DescribeClientQuotasResponse;
    }
    return createDescribeClientQuotasResponse({
      entries: r.entries.map((e) => ({ entity: e.entity.map((c) => ({ entityType: c.entityType, entityName: c.entityName })), values: e.values.map((v) => ({ key: v.key, value: v.value })) })),
    });
  },
});
