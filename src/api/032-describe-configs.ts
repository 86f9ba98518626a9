// DescribeConfigs v1-4 (v0 removed by Kafka 4) · v1: synonyms · v3: config types and documentation
// (KIP-569) · v4+: flexible.
import { ErrorCode } from '../../protocol/error-codes.js';
import {
  DescribeConfigsApi,
  createDescribeConfigsResponse,
  createDescribeConfigsResponseDescribeConfigsResourceResult,
  createDescribeConfigsResponseDescribeConfigsResult,
  createDescribeConfigsResponseDescribeConfigsSynonym,
} from '../../protocol/messages/032-describe-configs.gen.js';
import { brokerResourceError, configTypeCode, describeBrokerConfigs, ResourceType, topicResourceError, type DescribedConfig } from './configs.js';
import { defineHandler } from './handler.js';

export const describeConfigs = defineHandler({
  api: DescribeConfigsApi,
  uses: ['node', 'config', 'clusterConfigs', 'topics'],
  versions: { min: 1, max: 4 },
  handle(req, ctx) {
    const { node, config, clusterConfigs, topics } = ctx.services;
    const v = ctx.apiVersion;
    const results = req.resources.map((res) => {
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
    return createDescribeConfigsResponse({ results });
  },
});
