/**
 * Kafka's DescribeConfigs `ConfigSource` (DescribeConfigsResponse.ConfigSource, KIP-226): where a config value comes
 * from. 1 is TOPIC_CONFIG on the wire and DYNAMIC_TOPIC_CONFIG in the admin client's ConfigEntry. Shared by the
 * broker (src/cluster/config-defs.ts) and the client (src/client/admin.ts).
 */
export const ConfigSource = {
  UNKNOWN: 0,
  DYNAMIC_TOPIC_CONFIG: 1,
  DYNAMIC_BROKER_CONFIG: 2,
  DYNAMIC_DEFAULT_BROKER_CONFIG: 3,
  STATIC_BROKER_CONFIG: 4,
  DEFAULT_CONFIG: 5,
  DYNAMIC_BROKER_LOGGER_CONFIG: 6,
  CLIENT_METRICS_CONFIG: 7,
  GROUP_CONFIG: 8,
} as const;
