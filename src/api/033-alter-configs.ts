// AlterConfigs v0-2 · v1: same as v0 · v2+: flexible. Replaces a topic's whole set of overrides.
//
// Authorization (Kafka's ControllerApis.authorizeAlterResource): ALTER_CONFIGS on the topic for a TOPIC
// resource, on the cluster for BROKER and CLIENT_METRICS, on the group for GROUP; a resource denied is TOPIC_,
// CLUSTER_ or GROUP_AUTHORIZATION_FAILED with the code's message, before its name is validated or its existence
// looked at. On a broker listener the forwarding broker's ConfigAdminManager.preprocess comes first: duplicate
// keys, null values and a broker resource's id are refused before authorization, and so are BROKER_LOGGER and
// unknown types; on a controller listener (no forwarding) authorization comes first.
import { ErrorCode, errorByCode } from '../../protocol/error-codes.js';
import { AlterConfigsApi, createAlterConfigsResponse, createAlterConfigsResponseAlterConfigsResourceResponse } from '../../protocol/messages/033-alter-configs.gen.js';
import { ELR_BROKER_MIN_ISR, MIN_INSYNC_REPLICAS } from '../cluster/cluster-configs.js';
import { ClusterApiError } from '../cluster/errors.js';
import { quoted } from '../cluster/topic-names.js';
import { brokerResourceError, ResourceType, topicResourceError } from './configs.js';
import { configResourceDenial } from './032-describe-configs.js';
import { AclOperation } from './access.js';
import { defineHandler } from './handler.js';

export const alterConfigs = defineHandler({
  api: AlterConfigsApi,
  uses: ['node', 'clusterConfigs', 'topics'],
  versions: { min: 0, max: 2 },
  async handle(req, ctx) {
    const { node, clusterConfigs, topics } = ctx.services;
    const viaController = node.controllerListeners.includes(ctx.connection.listenerName);
    const authorize = (res: { resourceType: number; resourceName: string }): void => {
      // BROKER_LOGGER is no resource of AlterConfigs: refused unauthorized (preprocess; the controller's "Unexpected resource type").
      if (res.resourceType === ResourceType.BROKER_LOGGER) return;
      const denied = configResourceDenial(ctx.access, AclOperation.ALTER_CONFIGS, res.resourceType, res.resourceName);
      if (denied !== ErrorCode.NONE) throw new ClusterApiError(denied, errorByCode(denied).message!);
    };
    const responses = [];
    for (const res of req.resources) {
      const out = createAlterConfigsResponseAlterConfigsResourceResponse({ resourceType: res.resourceType, resourceName: res.resourceName });
      responses.push(out);
      try {
        if (viaController) authorize(res);
        const configs: Record<string, string> = {};
        for (const c of res.configs) {
          if (c.name in configs) throw new ClusterApiError(ErrorCode.INVALID_REQUEST, `Error due to duplicate config keys`);
          if (c.value === null) throw new ClusterApiError(ErrorCode.INVALID_REQUEST, `Null value not supported for : ${quoted(c.name)}`);
          configs[c.name] = c.value;
        }
        const brokerError = res.resourceType === ResourceType.BROKER ? brokerResourceError(node.nodeId, res.resourceName) : null;
        if (brokerError) throw new ClusterApiError(ErrorCode.INVALID_REQUEST, brokerError);
        if (!viaController) authorize(res);
        if (res.resourceType === ResourceType.TOPIC) {
          const invalid = topicResourceError(res.resourceName, true);
          if (invalid) throw invalid;
          if (!topics.get(res.resourceName)) throw new ClusterApiError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Topic ${res.resourceName} does not exist.`);
          await topics.setConfigs(res.resourceName, configs, req.validateOnly);
        } else if (res.resourceType === ResourceType.BROKER) {
          if (res.resourceName === '') {
            // The legacy API replaces the whole set of cluster-level values.
            await clusterConfigs.alter(new Map(Object.entries(configs)), { validateOnly: req.validateOnly, replaceAll: true });
            continue;
          }
          if (MIN_INSYNC_REPLICAS in configs) throw new ClusterApiError(ErrorCode.INVALID_CONFIG, ELR_BROKER_MIN_ISR);
          // The legacy API replaces this broker's whole set of own values.
          await clusterConfigs.alterBroker(new Map(Object.entries(configs)), { validateOnly: req.validateOnly, replaceAll: true });
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
