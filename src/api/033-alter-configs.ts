// AlterConfigs v0-2 · v1: same as v0 · v2+: flexible. Replaces a topic's whole set of overrides.
import { ErrorCode } from '../../protocol/error-codes.js';
import { AlterConfigsApi, createAlterConfigsResponse, createAlterConfigsResponseAlterConfigsResourceResponse } from '../../protocol/messages/033-alter-configs.gen.js';
import { ELR_BROKER_MIN_ISR, MIN_INSYNC_REPLICAS } from '../cluster/cluster-configs.js';
import { ClusterApiError } from '../cluster/errors.js';
import { quoted } from '../cluster/topic-names.js';
import { brokerResourceError, ResourceType, topicResourceError } from './configs.js';
import { defineHandler } from './handler.js';

export const alterConfigs = defineHandler({
  api: AlterConfigsApi,
  uses: ['node', 'clusterConfigs', 'topics'],
  versions: { min: 0, max: 2 },
  async handle(req, ctx) {
    const { node, clusterConfigs, topics } = ctx.services;
    const responses = [];
    for (const res of req.resources) {
      const out = createAlterConfigsResponseAlterConfigsResourceResponse({ resourceType: res.resourceType, resourceName: res.resourceName });
      responses.push(out);
      try {
        const configs: Record<string, string> = {};
        for (const c of res.configs) {
          if (c.name in configs) throw new ClusterApiError(ErrorCode.INVALID_REQUEST, `Error due to duplicate config keys`);
          if (c.value === null) throw new ClusterApiError(ErrorCode.INVALID_REQUEST, `Null value not supported for : ${quoted(c.name)}`);
          configs[c.name] = c.value;
        }
        if (res.resourceType === ResourceType.TOPIC) {
          const invalid = topicResourceError(res.resourceName, true);
          if (invalid) throw invalid;
          if (!topics.get(res.resourceName)) throw new ClusterApiError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Topic ${res.resourceName} does not exist.`);
          await topics.setConfigs(res.resourceName, configs, req.validateOnly);
        } else if (res.resourceType === ResourceType.BROKER) {
          const err = brokerResourceError(node.nodeId, res.resourceName);
          if (err) throw new ClusterApiError(ErrorCode.INVALID_REQUEST, err);
          if (res.resourceName === '') {
            // The legacy API replaces the whole set of cluster-level values.
            await clusterConfigs.alter(new Map(Object.entries(configs)), { validateOnly: req.validateOnly, replaceAll: true });
            continue;
          }
          if (MIN_INSYNC_REPLICAS in configs) throw new ClusterApiError(ErrorCode.INVALID_CONFIG, ELR_BROKER_MIN_ISR);
          if (Object.keys(configs).length > 0) {
            throw new ClusterApiError(ErrorCode.INVALID_CONFIG, `Cannot update these configs dynamically: ${quoted(Object.keys(configs).join(','))}`);
          }
        } else {
          throw new ClusterApiError(ErrorCode.INVALID_REQUEST, `Unsupported resource type ${res.resourceType}`);
        }
      } catch (e) {
        if (!(e instanceof ClusterApiError)) throw e;
        out.errorCode = e.errorCode;
        out.errorMessage = e.message;
      }
    }
    return createAlterConfigsResponse({ responses });
  },
});
