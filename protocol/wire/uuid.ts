/**
 * Kafka UUIDs (topic ids, member ids in KIP-848) travel as 16 raw bytes and are shown by Kafka's tools as
 * URL-safe base64 without padding (`Uuid.toString()`), e.g. `AAAAAAAAAAAAAAAAAAAAAA` for the zero UUID.
 * The codec uses that same string form, so ids compare with `===` and match what `kafka-topics.sh` prints.
 */
import { randomBytes } from 'node:crypto';

export const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';

export function uuidFromBytes(b: Buffer): string {
  return b.toString('base64url');
}

export function uuidToBytes(s: string): Buffer {
  const b = Buffer.from(s, 'base64url');
  if (b.length !== 16) throw new TypeError(`not a Kafka UUID: ${JSON.stringify(s)}`);
  return b;
}

/**
 * A random UUID as Kafka's `Uuid.randomUuid()` makes them: never the zero UUID or the METADATA_TOPIC_ID
 * (1), and never one whose string form starts with '-' (Kafka re-rolls those so they survive command lines).
 */
export function randomUuid(): string {
  for (;;) {
    const s = randomBytes(16).toString('base64url');
    if (s !== ZERO_UUID && s !== 'AAAAAAAAAAAAAAAAAAAAAQ' && !s.startsWith('-')) return s;
  }
}

/**
 * A random log directory id (KIP-858), as Kafka's `DirectoryId.random()` makes them: a random UUID that is
 * none of the reserved ids, the first hundred values of the UUID space (UNASSIGNED 0, LOST 1, MIGRATING 2, and
 * room for more).
 */
export function randomDirectoryId(): string {
  for (;;) {
    const s = randomUuid();
    const b = uuidToBytes(s);
    if (b.readBigUInt64BE(0) !== 0n || b.readBigUInt64BE(8) >= 100n) return s;
  }
}
