/**
 * Topic name rules, as Kafka's `org.apache.kafka.common.internals.Topic` enforces them.
 */

export const MAX_NAME_LENGTH = 249;
export const GROUP_METADATA_TOPIC_NAME = '__consumer_offsets';
export const TRANSACTION_STATE_TOPIC_NAME = '__transaction_state';
export const INTERNAL_TOPICS: ReadonlySet<string> = new Set([GROUP_METADATA_TOPIC_NAME, TRANSACTION_STATE_TOPIC_NAME]);

/** Longest piece of a client's string quoted in an error message. */
const MESSAGE_QUOTE_MAX = 256;

/**
 * A client-chosen string as an error message quotes it: cut after MESSAGE_QUOTE_MAX characters. Kafka quotes
 * names whole, but a message is an int16-length string in non-flexible versions: a 32,767-byte name quoted in
 * "Topic name is illegal, ..." would make the response unencodable and cost the client its connection.
 */
export function quoted(s: string): string {
  return s.length <= MESSAGE_QUOTE_MAX ? s : `${s.slice(0, MESSAGE_QUOTE_MAX)}... (${s.length} characters)`;
}

/** Why a topic name is invalid (Kafka's message, org.apache.kafka.common.internals.Topic.validate), or null when it is valid. */
export function topicNameError(name: string): string | null {
  if (name.length === 0) return 'Topic name is illegal, it can\'t be empty';
  if (name === '.' || name === '..') return 'Topic name cannot be "." or ".."';
  if (name.length > MAX_NAME_LENGTH) return `Topic name is illegal, it can't be longer than ${MAX_NAME_LENGTH} characters, topic name: ${quoted(name)}`;
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
