// IncrementalAlterConfigs v0-1 (KIP-339) · v1+: flexible. Operations SET, DELETE, APPEND and SUBTRACT
// (the last two for LIST configs only) applied to a topic's overrides; DELETE of a config not set, known or not,
// is a no-op as in Kafka.
//
// Authorization (Kafka's ControllerApis.authorizeAlterResource): ALTER_CONFIGS on the topic for a TOPIC
// resource, on the cluster for BROKER and CLIENT_METRICS, on the group for GROUP; a resource denied is TOPIC_,
// CLUSTER_ or GROUP_AUTHORIZATION_FAILED with the code's message, before its name is validated or its existence
// looked at. BROKER_LOGGER (RuntimeLoggerManager.applyChangesForResource) needs ALTER_CONFIGS on the cluster
// from a broker listener, CLUSTER_ACTION on a controller listener: CLUSTER_AUTHORIZATION_FAILED. On a broker
// listener the forwarding broker's ConfigAdminManager.preprocess comes first: duplicate keys, null values
// (but to DELETE) and a broker resource's id are refused before authorization; on a controller listener (no
// forwarding) authorization comes first.
import { ErrorCode, errorByCode } from '../../protocol/error-codes.js';
import {
  IncrementalAlterConfigsApi,
  createIncrementalAlterConfigsResponse,
  createIncrementalAlterConfigsResponseAlterConfigsResourceResponse,
} from '../../protocol/messages/044-incremental-alter-configs.gen.js';
import { ELR_BROKER_MIN_ISR, MIN_INSYNC_REPLICAS } from '../cluster/cluster-configs.js';
import { BROKER_CONFIG_BY_NAME, TOPIC_CONFIG_BY_NAME } from '../cluster/config-defs.js';
import { ClusterApiError } from '../cluster/errors.js';
import { quoted } from '../cluster/topic-names.js';
import { brokerResourceError, ResourceType, topicResourceError } from './configs.js';
import { configResourceDenial } from './032-describe-configs.js';
import { AclOperation } from './access.js';
import { defineHandler } from './handler.js';

const SET = 0;
const DELETE = 1;
const APPEND = 2;
const SUBTRACT = 3;

export const incrementalAlterConfigs = defineHandler({
  api: IncrementalAlterConfigsApi,
  uses: ['node', 'config', 'clusterConfigs', 'topics'],
  versions: { min: 0, max: 1 },
  async handle(req, ctx) {
    const { node, config, clusterConfigs, topics } = ctx.services;
    const viaController = node.controllerListeners.includes(ctx.connection.listenerName);
    const authorize = (res: { resourceType: number; resourceName: string }): void => {
      const denied = res.resourceType === ResourceType.BROKER_LOGGER
        ? (ctx.access.authorizeCluster(viaController ? AclOperation.CLUSTER_ACTION : AclOperation.ALTER_CONFIGS) ? ErrorCode.NONE : ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
        : configResourceDenial(ctx.access, AclOperation.ALTER_CONFIGS, res.resourceType, res.resourceName);
      if (denied !== ErrorCode.NONE) throw new ClusterApiError(denied, errorByCode(denied).message!);
    };
    const responses = [];
    for (const res of req.resources) {
      const out = createIncrementalAlterConfigsResponseAlterConfigsResourceResponse({ resourceType: res.resourceType, resourceName: res.resourceName });
      responses.push(out);
      try {
        if (viaController) authorize(res);
        const names = new Set<string>();
        for (const c of res.configs) {
          if (names.has(c.name)) throw new ClusterApiError(ErrorCode.INVALID_REQUEST, `Error due to duplicate config keys`);
          names.add(c.name);
        }
        if (!viaController) {
          // ConfigAdminManager.preprocess, on the broker before the controller authorizes.
          const nulls = res.configs.filter((c) => c.configOperation !== DELETE && c.value === null).map((c) => c.name);
          if (nulls.length > 0) throw new ClusterApiError(ErrorCode.INVALID_REQUEST, `Null value not supported for : ${nulls.join(', ')}`);
          const brokerError = res.resourceType === ResourceType.BROKER ? brokerResourceError(node.nodeId, res.resourceName) : null;
          if (brokerError) throw new ClusterApiError(ErrorCode.INVALID_REQUEST, brokerError);
          authorize(res);
        }
        if (res.resourceType === ResourceType.TOPIC) {
          const invalid = topicResourceError(res.resourceName, true);
          if (invalid) throw invalid;
          const t = topics.get(res.resourceName);
          if (!t) throw new ClusterApiError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Topic ${res.resourceName} does not exist.`);
          const next: Record<string, string> = { ...t.configs };
          for (const c of res.configs) {
            if (c.configOperation === DELETE) {
              // Kafka's ConfigurationControlManager.incrementalAlterConfigResource writes no record when the value
              // is already absent, and validates only the configs that remain: deleting a config the topic does
              // not set, or one this broker does not know (MirrorMaker 2 deletes every source default, e.g.
              // Kafka 4.4's errors.deadletterqueue.group.enable), is a no-op, never an error.
              delete next[c.name];
              continue;
            }
            const def = TOPIC_CONFIG_BY_NAME.get(c.name);
            if (!def) throw new ClusterApiError(ErrorCode.INVALID_CONFIG, `Unknown topic config name: ${quoted(c.name)}`);
            switch (c.configOperation) {
              case SET:
                if (c.value === null) throw new ClusterApiError(ErrorCode.INVALID_REQUEST, `Null value not supported for : ${c.name}`);
                next[c.name] = c.value;
                break;
              case APPEND:
              case SUBTRACT: {
                if (def.type !== 'LIST') {
                  throw new ClusterApiError(ErrorCode.INVALID_CONFIG, `Config value append is not allowed for config key: ${c.name}`);
                }
                next[c.name] = appliedToList(next[c.name] ?? topics.configValue(t, c.name), c.value, c.configOperation);
                break;
              }
              default:
                throw new ClusterApiError(ErrorCode.INVALID_REQUEST, `Unknown config operation ${c.configOperation}`);
            }
          }
          await topics.setConfigs(t.name, next, req.validateOnly);
        } else if (res.resourceType === ResourceType.BROKER) {
          const err = brokerResourceError(node.nodeId, res.resourceName);
          if (err) throw new ClusterApiError(ErrorCode.INVALID_REQUEST, err);
          if (res.resourceName === '') {
            await clusterConfigs.alter(clusterChanges(res.configs, (name) => clusterConfigs.get(name) ?? config.values.get(name) ?? BROKER_CONFIG_BY_NAME.get(name)?.default ?? null), { validateOnly: req.validateOnly });
            continue;
          }
          if (res.configs.some((c) => c.name === MIN_INSYNC_REPLICAS)) throw new ClusterApiError(ErrorCode.INVALID_CONFIG, ELR_BROKER_MIN_ISR);
          // This broker's own values (DYNAMIC_BROKER_CONFIG), over the cluster-level and static ones.
          await clusterConfigs.alterBroker(
            clusterChanges(res.configs, (name) => clusterConfigs.broker(name) ?? clusterConfigs.get(name) ?? config.values.get(name) ?? BROKER_CONFIG_BY_NAME.get(name)?.default ?? null),
            { validateOnly: req.validateOnly },
          );
        } else {
          throw new ClusterApiError(ErrorCode.INVALID_REQUEST, `Unsupported resource type ${res.resourceType}`);
        }
      } catch (e) {
        if (!(e instanceof ClusterApiError)) throw e;
        out.errorCode = e.errorCode;
        out.errorMessage = e.message;
      }
    }
    return createIncrementalAlterConfigsResponse({ responses });
  },
});

/**
 * The changes an IncrementalAlterConfigs of the cluster-level broker resource makes: SET a value, DELETE one,
 * APPEND to / SUBTRACT from a LIST config's current effective value. Throws ClusterApiError.
 */
function clusterChanges(configs: readonly { name: string; configOperation: number; value: string | null }[], current: (name: string) => string | null): Map<string, string | null> {
  const changes = new Map<string, string | null>();
  for (const c of configs) {
    switch (c.configOperation) {
      case SET:
        if (c.value === null) throw new ClusterApiError(ErrorCode.INVALID_REQUEST, `Null value not supported for : ${c.name}`);
        changes.set(c.name, c.value);
        break;
      case DELETE:
        changes.set(c.name, null);
        break;
      case APPEND:
      case SUBTRACT: {
        if (BROKER_CONFIG_BY_NAME.get(c.name)?.type !== 'LIST') throw new ClusterApiError(ErrorCode.INVALID_CONFIG, `Config value append is not allowed for config key: ${c.name}`);
        changes.set(c.name, appliedToList(current(c.name), c.value, c.configOperation));
        break;
      }
      default:
        throw new ClusterApiError(ErrorCode.INVALID_REQUEST, `Unknown config operation ${c.configOperation}`);
    }
  }
  return changes;
}

/** A LIST config's value after APPEND (items not yet there, at the end) or SUBTRACT (items taken out). */
function appliedToList(current: string | null, value: string | null, operation: number): string {
  const split = (v: string | null): string[] => (v ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  const now = split(current);
  const items = split(value);
  return (operation === APPEND ? [...now, ...items.filter((i) => !now.includes(i))] : now.filter((i) => !items.includes(i))).join(',');
}
