/**
 * Which __consumer_offsets partition holds a group: Kafka's `Utils.abs(groupId.hashCode()) % numPartitions`
 * (GroupCoordinatorService.partitionFor), with Java's String.hashCode over UTF-16 code units, so that a
 * group lands in the same partition as it would on a Kafka broker with the same partition count (tools
 * that read __consumer_offsets rely on it).
 */

/** Java's `String.hashCode()`: s[0]·31^(n-1) + … + s[n-1], in 32-bit two's complement arithmetic. */
export function javaStringHashCode(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return h;
}

/** Kafka's `Utils.abs`: Math.abs, except Integer.MIN_VALUE maps to 0 (not to itself). */
export function kafkaAbs(n: number): number {
  return n === -2147483648 ? 0 : Math.abs(n);
}

export function partitionForGroup(groupId: string, numPartitions: number): number {
  return kafkaAbs(javaStringHashCode(groupId)) % numPartitions;
}
