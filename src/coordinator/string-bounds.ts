/**
 * Bounds on the client-chosen strings the coordinator keeps. Kafka's non-flexible encodings carry a string
 * with an int16 length, so no string longer than Short.MAX_VALUE (32,767) UTF-8 bytes can be written in
 * them: not in the coordinator's record keys (GroupMetadataKey, OffsetCommitKey and the ConsumerGroup*Key
 * records have no flexible version), not in GroupMetadataValue v3, and not in the non-flexible versions of
 * ListGroups (v0-2), DescribeGroups (v0-4) or JoinGroup (v0-5) that other clients of the same group use.
 * Flexible request versions (compact strings) can carry longer ones, so they are refused on the way in:
 * a kept string that cannot be persisted or encoded for another client must never enter.
 *
 * Kafka itself checks only that these strings are not empty (GroupCoordinatorService.isGroupIdNotEmpty,
 * throwIfEmptyString); a longer one there fails to serialize when the record or response is written.
 */

/** Short.MAX_VALUE: the longest string, in UTF-8 bytes, of Kafka's non-flexible encodings. */
export const MAX_STRING_BYTES = 0x7fff;

/** True when `s` has more UTF-8 bytes than a non-flexible string can carry. */
export function exceedsInt16String(s: string | null): boolean {
  // A UTF-16 code unit is at most 3 UTF-8 bytes: short strings need no count.
  if (s === null || s.length * 3 <= MAX_STRING_BYTES) return false;
  return Buffer.byteLength(s, 'utf8') > MAX_STRING_BYTES;
}

/** `s` cut to at most `maxBytes` UTF-8 bytes, never inside a character. */
export function truncateUtf8(s: string, maxBytes: number): string {
  if (s.length * 3 <= maxBytes || Buffer.byteLength(s, 'utf8') <= maxBytes) return s;
  const buf = Buffer.from(s, 'utf8');
  let end = maxBytes;
  // Back up over continuation bytes (10xxxxxx) to the start of the character that would be cut.
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--;
  return buf.subarray(0, end).toString('utf8');
}

/**
 * Kafka's classic member id, prefix + '-' + UUID (ClassicGroup.generateMemberId: the group instance id, else
 * the client id). The prefix is cut so that the id fits a non-flexible string: a client id may be 32,767
 * bytes (the request header's int16 string), and its member id must still reach a JoinGroup v4 client.
 */
export function classicMemberId(prefix: string, uuid: string): string {
  return `${truncateUtf8(prefix, MAX_STRING_BYTES - 1 - Buffer.byteLength(uuid, 'utf8'))}-${uuid}`;
}
