/**
 * Topic name rules, as Kafka's `org.apache.kafka.common.internals.Topic` enforces them.
 */

export const MAX_NAME_LENGTH = 249;
export const GROUP_METADATA_TOPIC_NAME = '__consumer_offsets';
export const TRANSACTION_STATE_TOPIC_NAME = '__transaction_state';
export const INTERNAL_TOPICS: ReadonlySet<string> = new Set([GROUP_METADATA_TOPIC_NAME, TRANSACTION_STATE_TOPIC_NAME]);

/** Why a topic name is invalid (Kafka's message), or null when it is valid. */
export function topicNameError(name: string): string | null {
  if (name.length === 0) return 'Topic name is illegal, it can\'t be empty';
  if (name === '.' || name === '..') return 'Topic name cannot be "." or ".."';
  if (name.length > MAX_NAME_LENGTH) return `Topic name is illegal, it can't be longer than ${MAX_NAME_LENGTH} characters, topic name: ${name}`;
  if (!/^[a-zA-Z0-9._-]+$/.test(name)) return `Topic name "${name}" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'`;
  return null;
}

/** Kafka: '.' and '_' collide in metric names, so two topics may not differ only by them. */
export function unifyCollisionChars(name: string): string {
  return name.replace(/\./g, '_');
}

export function hasCollisionChars(name: string): boolean {
  return name.includes('.') || name.includes('_');
}

export function isInternalTopic(name: string): boolean {
  return INTERNAL_TOPICS.has(name);
}
