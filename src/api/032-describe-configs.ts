// DescribeConfigs v1-4 (v0 removed by Kafka 4) · v1: synonyms · v3: config types and documentation
// (KIP-569) · v4+: flexible.
//
// Authorization (Kafka's ConfigHelper.handleDescribeConfigsRequest): DESCRIBE_CONFIGS on the topic for a TOPIC
// resource, on the cluster for BROKER, BROKER_LOGGER and CLIENT_METRICS, on the group for GROUP. A resource
// denied is answered TOPIC_, CLUSTER_ or GROUP_AUTHORIZATION_FAILED with the code's message and no configs,
// before anything else is looked at, after the resources allowed. (Kafka fails the whole request when a
// resource is of another type; Ledgerline answers that resource INVALID_REQUEST, as without an authorizer.)
import { ErrorCode, errorByCode } from '../../protocol/error-codes.js';
import {
  DescribeConfigsApi,
  createDescribeConfigsResponse,
  createDescribeConfigsResponseDescribeConfigsResourceResult,
  createDescribeConfigsResponseDescribeConfigsResult,
  createDescribeConfigsResponseDescribeConfigsSynonym,
} from '../../protocol/messages/032-describe-configs.gen.js';
import { brokerResourceError, configTypeCode, describeBrokerConfigs, ResourceType, topicResourceError, type DescribedConfig } from './configs.js';
import { AclOperation, CLUSTER_NAME, ResourceType as AclResourceType, type Access } from './access.js';
import { defineHandler } from './handler.js';

/**
 * The ACL resource a config resource is authorized on and the error a denial gets (ConfigHelper, ControllerApis.
 * authorizeAlterResource): the cluster for broker, broker-logger and client-metrics resources, else the topic
 * or group; null for a type that has none.
 */
export function configResourceAcl(resourceType: number, resourceName: string): { type: number; name: string; denied: number } | null {
  switch (resourceType) {
    case ResourceType.BROKER:
    case ResourceType.BROKER_LOGGER:
    case ResourceType.CLIENT_METRICS:
      return { type: AclResourceType.CLUSTER, name: CLUSTER_NAME, denied: ErrorCode.CLUSTER_AUTHORIZATION_FAILED };
    case ResourceType.TOPIC:
      return { type: AclResourceType.TOPIC, name: resourceName, denied: ErrorCode.TOPIC_AUTHORIZATION_FAILED };
    case ResourceType.GROUP:
      return { type: AclResourceType.GROUP, name: resourceName, denied: ErrorCode.GROUP_AUTHORIZATION_FAILED };
    default:
      return null;
  }
}

/** The error `operation` on the config resource's ACL resource is denied with, or NONE when allowed (or none applies). */
export function configResourceDenial(access: Access, operation: number, resourceType: number, resourceName: string): number {
  const acl = configResourceAcl(resourceType, resourceName);
  return acl === null || access.authorize(operation, acl.type, acl.name) ? ErrorCode.NONE : acl.denied;
}

export const describeConfigs = defineHandler({
  api: DescribeConfigsApi,
  uses: ['node', 'config', 'clusterConfigs', 'topics'],
  versions: { min: 1, max: 4 },
  handle(req, ctx) {
    const { node, config, clusterConfigs, topics } = ctx.services;
    const v = ctx.apiVersion;
    // Each resource authorized in request order; the denied ones answered after the others.
    const denials = req.resources.map((res) => configResourceDenial(ctx.access, AclOperation.DESCRIBE_CONFIGS, res.resourceType, res.resourceName));
    const refused = req.resources.flatMap((res, i) => {
      const errorCode = denials[i]!;
      if (errorCode === ErrorCode.NONE) return [];
      return [createDescribeConfigsResponseDescribeConfigsResult({ resourceType: res.resourceType, resourceName: res.resourceName, errorCode, errorMessage: errorByCode(errorCode).message, configs: [] })];
    });
    const results = req.resources.filter((_, i) => denials[i] === ErrorCode.NONE).map((res) => {
      const out = createDescribeConfigsResponseDescribeConfigsResult({ resourceType: res.resourceType, resourceName: res.resourceName });
      let described: DescribedConfig[];
      if (res.resourceType === ResourceType.TOPIC) {
        const invalid = topicResourceError(res.resourceName, false);
        if (invalid) {
          out.errorCode = invalid.errorCode;
          out.errorMessage = invalid.message;
          return out;
        }
        const t = topics.get(res.resourceName);
        if (!t) {
          out.errorCode = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
          out.errorMessage = `Topic ${res.resourceName} does not exist.`;
          return out;
        }
        described = topics.resolveAll(t);
      } else if (res.resourceType === ResourceType.BROKER) {
        const err = brokerResourceError(node.nodeId, res.resourceName);
        if (err) {
          out.errorCode = ErrorCode.INVALID_REQUEST;
          out.errorMessage = err;
          return out;
        }
        described = describeBrokerConfigs(config, clusterConfigs, res.resourceName);
      } else {
        out.errorCode = ErrorCode.INVALID_REQUEST;
        out.errorMessage = `Unsupported resource type ${res.resourceType}`;
        return out;
      }
      if (res.configurationKeys !== null) {
        const keys = new Set(res.configurationKeys);
        described = described.filter((d) => keys.has(d.def.name));
      }
      out.configs = described.map((d) =>
        createDescribeConfigsResponseDescribeConfigsResourceResult({
          name: d.def.name,
          value: d.def.sensitive ? null : d.value,
          readOnly: d.def.readOnly ?? false,
          configSource: d.source,
          isSensitive: d.def.sensitive ?? false,
          synonyms: req.includeSynonyms ? d.synonyms.map((s) => createDescribeConfigsResponseDescribeConfigsSynonym(s)) : [],
          configType: v >= 3 ? configTypeCode(d.def) : 0,
          documentation: v >= 3 && req.includeDocumentation ? d.def.doc : null,
        }),
      );
      return out;
    });
    return createDescribeConfigsResponse({ results: [...results, ...refused] });
  },
});
