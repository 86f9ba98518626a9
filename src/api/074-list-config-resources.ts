// ListConfigResources v0-1 · v0+: flexible · v0 is Kafka 3.x's ListClientMetricsResources (KIP-714), which
// lists client-metrics resources only · v1: resource types asked for, and each resource's type (KIP-1142).
//
// As Kafka 4.4's KafkaApis.handleListConfigResources: the types asked for (none: every type the version
// supports, v0 CLIENT_METRICS, v1 TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS and GROUP) must all be
// supported, else the answer is UNSUPPORTED_VERSION with no resources; then groups with dynamic configs,
// client-metrics subscriptions, this broker for BROKER_LOGGER and for BROKER (by id), and every topic. This
// node keeps no group configs and no client-metrics subscriptions, so those lists are empty.
//
// Authorization (as KafkaApis.handleListClientMetricsResources before it): DESCRIBE_CONFIGS on the cluster
// before the types are looked at, else the error response: CLUSTER_AUTHORIZATION_FAILED at the top level.
import { ErrorCode } from '../../protocol/error-codes.js';
import {
  ListConfigResourcesApi,
  createListConfigResourcesResponse,
  createListConfigResourcesResponseConfigResource,
  type ListConfigResourcesRequest,
  type ListConfigResourcesResponse,
} from '../../protocol/messages/074-list-config-resources.gen.js';
import { AclOperation } from './access.js';
import { errorResponse } from './error-response.js';
import { defineHandler } from './handler.js';
import { NODE_VIEW_USES, nodeViewOf, type NodeView } from './node-view.js';

/** Kafka's ConfigResource.Type ids. */
export const ConfigResourceType = { TOPIC: 2, BROKER: 4, BROKER_LOGGER: 8, CLIENT_METRICS: 16, GROUP: 32 } as const;

/** Kafka's ListConfigResourcesRequest.supportedResourceTypes(). */
function supportedTypes(version: number): readonly number[] {
  const T = ConfigResourceType;
  return version === 0 ? [T.CLIENT_METRICS] : [T.TOPIC, T.BROKER, T.BROKER_LOGGER, T.CLIENT_METRICS, T.GROUP];
}

export function listConfigResources(node: NodeView, req: ListConfigResourcesRequest, version: number): ListConfigResourcesResponse {
  const supported = supportedTypes(version);
  const asked = version >= 1 && req.resourceTypes.length > 0 ? req.resourceTypes : supported;
  if (asked.some((t) => !supported.includes(t))) return createListConfigResourcesResponse({ errorCode: ErrorCode.UNSUPPORTED_VERSION });
  const T = ConfigResourceType;
  const out: { resourceName: string; resourceType: number }[] = [];
  // GROUP and CLIENT_METRICS first, as Kafka lists them: none on this node.
  if (asked.includes(T.BROKER_LOGGER)) out.push({ resourceName: String(node.nodeId), resourceType: T.BROKER_LOGGER });
  if (asked.includes(T.BROKER)) out.push({ resourceName: String(node.nodeId), resourceType: T.BROKER });
  if (asked.includes(T.TOPIC)) for (const t of node.topics()) out.push({ resourceName: t.name, resourceType: T.TOPIC });
  return createListConfigResourcesResponse({ configResources: out.map((r) => createListConfigResourcesResponseConfigResource(r)) });
}

export const listConfigResourcesHandler = defineHandler({
  api: ListConfigResourcesApi,
  uses: NODE_VIEW_USES,
  versions: { min: 0, max: 1 },
  handle(req, ctx) {
    if (!ctx.access.authorizeCluster(AclOperation.DESCRIBE_CONFIGS)) {
      return errorResponse(ListConfigResourcesApi.apiKey, ctx.apiVersion, req, { code: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, message: null }) as ListConfigResourcesResponse;
    }
    return listConfigResources(nodeViewOf(ctx), req, ctx.apiVersion);
  },
});
