/**
 * Shared by DescribeConfigs, AlterConfigs and IncrementalAlterConfigs: Kafka's config resource types and
 * how a broker's own configs are described.
 */
import type { BrokerConfig } from '../config.js';
import { ErrorCode } from '../../protocol/error-codes.js';
import { BROKER_CONFIGS, ConfigSource, ConfigType, type ConfigDef } from '../cluster/config-defs.js';
import { quoted, topicNameError } from '../cluster/topic-names.js';
import { ClusterApiError } from '../cluster/errors.js';
import type { ClusterConfigService } from './services.js';

/** Kafka's ConfigResource.Type codes. */
export const ResourceType = {
  UNKNOWN: 0,
  TOPIC: 2,
  BROKER: 4,
  CLIENT_METRICS: 16,
  BROKER_LOGGER: 8,
  GROUP: 32,
} as const;

export interface DescribedConfig {
  def: ConfigDef;
  value: string | null;
  source: number;
  synonyms: { name: string; value: string | null; source: number }[];
}

/**
 * A broker resource's configs, with where each value comes from. Broker "<id>": every broker config; its
 * value is this broker's dynamic one, else the cluster-level dynamic one, else the static one, else the default,
 * with those synonyms (Kafka's ConfigHelper.createBrokerConfigEntry). Broker "" (the cluster default,
 * `--entity-default`): only the values set at the cluster level, as Kafka describes `currentDynamicDefaultConfigs`.
 */
export function describeBrokerConfigs(config: BrokerConfig, dynamic: Pick<ClusterConfigService, 'get' | 'broker'>, resourceName: string): DescribedConfig[] {
  const described = BROKER_CONFIGS.map((def) => {
    const explicit = config.explicit.has(def.name);
    const own = dynamic.broker(def.name);
    const cluster = dynamic.get(def.name);
    const synonyms = [];
    if (own !== undefined) synonyms.push({ name: def.name, value: own, source: ConfigSource.DYNAMIC_BROKER_CONFIG });
    if (cluster !== undefined) synonyms.push({ name: def.name, value: cluster, source: ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG });
    const staticValue = config.values.get(def.name) ?? null;
    if (explicit) synonyms.push({ name: def.name, value: staticValue, source: ConfigSource.STATIC_BROKER_CONFIG });
    if (def.default !== null) synonyms.push({ name: def.name, value: def.default, source: ConfigSource.DEFAULT_CONFIG });
    const value = own ?? cluster ?? staticValue;
    const source =
      own !== undefined ? ConfigSource.DYNAMIC_BROKER_CONFIG : cluster !== undefined ? ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG : explicit ? ConfigSource.STATIC_BROKER_CONFIG : ConfigSource.DEFAULT_CONFIG;
    return { def, value: def.sensitive ? null : value, source, synonyms };
  });
  if (resourceName !== '') return described;
  return described.filter((d) => d.synonyms.some((s) => s.source === ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)).map((d) => {
    const value = dynamic.get(d.def.name)!;
    return { ...d, value: d.def.sensitive ? null : value, source: ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG, synonyms: d.synonyms.filter((s) => s.source !== ConfigSource.DYNAMIC_BROKER_CONFIG) };
  });
}

export function configTypeCode(def: ConfigDef): number {
  return ConfigType[def.type];
}

/** The error Kafka gives when a broker resource names another broker. */
export function brokerResourceError(nodeId: number, resourceName: string): string | null {
  if (resourceName === '' || resourceName === String(nodeId)) return null;
  return `Unexpected broker id, expected ${nodeId} or empty string, but received ${quoted(resourceName)}`;
}

/**
 * The error for a topic resource whose name is not a legal topic name, or null. DescribeConfigs: Kafka's
 * ConfigHelper runs Topic.validate (INVALID_TOPIC_EXCEPTION); the alter APIs: the controller's
 * ControllerConfigurationValidator.validateTopicName, which first refuses the empty name with INVALID_REQUEST.
 */
export function topicResourceError(name: string, alter: boolean): ClusterApiError | null {
  if (alter && name === '') return new ClusterApiError(ErrorCode.INVALID_REQUEST, 'Default topic resources are not allowed.');
  const err = topicNameError(name);
  return err === null ? null : new ClusterApiError(ErrorCode.INVALID_TOPIC_EXCEPTION, err);
}
