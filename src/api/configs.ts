/**
 * Shared by DescribeConfigs, AlterConfigs and IncrementalAlterConfigs: Kafka's config resource types and
 * how a broker's own configs are described.
 */
import type { BrokerConfig } from '../config.js';
import { ErrorCode } from '../../protocol/error-codes.js';
import { BROKER_CONFIGS, ConfigSource, ConfigType, type ConfigDef } from '../cluster/config-defs.js';
import { quoted, topicNameError } from '../cluster/topic-names.js';
import { ClusterApiError } from '../cluster/errors.js';

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

/** Every broker config, with where its value comes from. */
export function describeBrokerConfigs(config: BrokerConfig): DescribedConfig[] {
  return BROKER_CONFIGS.map((def) => {
    const explicit = config.explicit.has(def.name);
    const value = config.values.get(def.name) ?? null;
    const synonyms = [];
    if (explicit) synonyms.push({ name: def.name, value, source: ConfigSource.STATIC_BROKER_CONFIG });
    if (def.default !== null) synonyms.push({ name: def.name, value: def.default, source: ConfigSource.DEFAULT_CONFIG });
    return { def, value: def.sensitive ? null : value, source: explicit ? ConfigSource.STATIC_BROKER_CONFIG : ConfigSource.DEFAULT_CONFIG, synonyms };
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
