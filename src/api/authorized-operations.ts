/**
 * KIP-430 authorized-operation bit fields. Ledgerline has no authorizer yet, so every principal may do
 * everything a resource type supports: the answer Kafka gives when no authorizer is configured.
 * Operation codes are Kafka's AclOperation values.
 */
const bits = (...ops: number[]): number => ops.reduce((a, op) => a | (1 << op), 0);

const READ = 3;
const WRITE = 4;
const CREATE = 5;
const DELETE = 6;
const ALTER = 7;
const DESCRIBE = 8;
const CLUSTER_ACTION = 9;
const DESCRIBE_CONFIGS = 10;
const ALTER_CONFIGS = 11;
const IDEMPOTENT_WRITE = 12;
const CREATE_TOKENS = 13;
const DESCRIBE_TOKENS = 14;

/** Kafka's sentinel for "not requested" (Integer.MIN_VALUE). */
export const AUTHORIZED_OPERATIONS_OMITTED = -2147483648;

export const TOPIC_OPERATIONS = bits(READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS);
export const GROUP_OPERATIONS = bits(READ, DELETE, DESCRIBE);
export const CLUSTER_OPERATIONS = bits(CREATE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, ALTER, DESCRIBE, CREATE_TOKENS, DESCRIBE_TOKENS);
