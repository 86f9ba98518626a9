/**
 * A record sealed and opened as README "Records" specifies, over a client-neutral record shape: the
 * deterministic core every library (TypeScript, Java, Python, Go) implements the same way, and what the
 * test vectors in test/vectors/e2e/ pin down. Randomness and keys come in as parameters; the encryptor and
 * decryptor (encryptor.ts, decryptor.ts) supply them.
 */
import { createHmac } from 'node:crypto';
import {
  decodeEnvelope,
  decodeHeaderList,
  encodeEnvelope,
  encodeHead,
  encodeHeaderList,
  ENVELOPE_HEADER,
  Section,
  type Envelope,
  type SealedHeader,
  type WrappedKey,
} from './envelope.js';
import { openPart, sealPart, sectionAad, type DataKeyMaterial } from './seal.js';

export interface E2eHeader {
  readonly key: string;
  readonly value: Buffer | null;
}

/** A record as every client has it: key, value, headers in order. */
export interface E2eRecord {
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: readonly E2eHeader[];
}

export interface SealParams {
  readonly topic: string;
  readonly dataKeyId: Buffer;
  readonly dataKey: DataKeyMaterial;
  readonly nonceBase: Buffer;
  /** Empty: the envelope references the data key (announced by an earlier record). */
  readonly wrappedKeys: readonly WrappedKey[];
  /** Replace the key with its HMAC-SHA256 pseudonym under this secret (a null key stays null). */
  readonly pseudonym?: { readonly keyId: string; readonly secret: Buffer } | null;
  /** Names of the headers to seal; the others stay in the clear. */
  readonly sealHeaders?: readonly string[];
}

/** An error of the format or of authentication, with the reason a consumer's failure action reports. */
export class E2eError extends Error {
  override readonly name = 'E2eError';
  constructor(
    readonly reason: 'malformed' | 'no-key' | 'unwrap-failed' | 'unknown-data-key' | 'not-authentic',
    message: string,
  ) {
    super(message);
  }
}

/** The deterministic pseudonym of a key: HMAC-SHA256(secret, key). */
export function pseudonymOf(secret: Buffer, key: Buffer): Buffer {
  return createHmac('sha256', secret).update(key).digest();
}

export function sealRecord(record: E2eRecord, p: SealParams): E2eRecord {
  return sealRecordWith(record, p, (pseudonymKeyId, sealsHeaders) =>
    encodeHead({ dataKeyId: p.dataKeyId, nonceBase: p.nonceBase, wrappedKeys: p.wrappedKeys, pseudonymKeyId, sealsHeaders }),
  );
}

/**
 * sealRecord with the head made by `headFor` (what encodeHead would make of `p`, given whether the record
 * gets a pseudonym and sealed headers): the encryptor passes copies of heads it laid out once per data key.
 */
export function sealRecordWith(record: E2eRecord, p: SealParams, headFor: (pseudonymKeyId: string | null, sealsHeaders: boolean) => Buffer): E2eRecord {
  const sealNames = p.sealHeaders;
  const clear: E2eHeader[] = [];
  const sealed: SealedHeader[] = [];
  for (const h of record.headers) {
    if (h.key === ENVELOPE_HEADER) throw new E2eError('malformed', `the record already has a ${ENVELOPE_HEADER} header`);
    (sealNames !== undefined && sealNames.includes(h.key) ? sealed : clear).push(h);
  }
  const pseudonym = p.pseudonym != null && record.key !== null ? p.pseudonym : null;
  const storedKey = pseudonym !== null ? pseudonymOf(pseudonym.secret, record.key!) : record.key;
  const head = headFor(pseudonym?.keyId ?? null, sealed.length > 0);
  const seal = (section: Section, plaintext: Buffer): Buffer => sealPart(p.dataKey, p.nonceBase, section, sectionAad(section, p.topic, storedKey, head), plaintext);
  const sealedKey = pseudonym !== null ? seal(Section.KEY, record.key!) : null;
  const sealedHeaders = sealed.length > 0 ? seal(Section.HEADERS, encodeHeaderList(sealed)) : null;
  const value = record.value === null ? null : seal(Section.VALUE, record.value);
  return { key: storedKey, value, headers: [...clear, { key: ENVELOPE_HEADER, value: encodeEnvelope(head, sealedKey, sealedHeaders) }] };
}

/** The envelope of a record: null when it has none (plaintext); throws E2eError when it is malformed or repeated. */
export function envelopeOf(record: E2eRecord): Envelope | null {
  let found: Buffer | null | undefined;
  for (const h of record.headers) {
    if (h.key !== ENVELOPE_HEADER) continue;
    if (found !== undefined) throw new E2eError('malformed', `the record has more than one ${ENVELOPE_HEADER} header`);
    found = h.value;
  }
  if (found === undefined) return null;
  if (found === null) throw new E2eError('malformed', `the ${ENVELOPE_HEADER} header has a null value`);
  try {
    return decodeEnvelope(found);
  } catch (e) {
    throw new E2eError('malformed', (e as Error).message);
  }
}

/** Opens a sealed record with its (unwrapped) data key; throws E2eError('not-authentic') when any part fails. */
export function openRecord(record: E2eRecord, topic: string, envelope: Envelope, dataKey: DataKeyMaterial): E2eRecord {
  const open = (section: Section, sealed: Buffer): Buffer => {
    try {
      return openPart(dataKey, envelope.nonceBase, section, sectionAad(section, topic, record.key, envelope.head), sealed);
    } catch {
      throw new E2eError('not-authentic', `the record's ${Section[section].toLowerCase()} does not authenticate under data key ${envelope.dataKeyId.toString('hex')} (topic, key or envelope changed, or a wrong key)`);
    }
  };
  const key = envelope.sealedKey !== null ? open(Section.KEY, envelope.sealedKey) : record.key;
  const value = record.value === null ? null : open(Section.VALUE, record.value);
  const headers: E2eHeader[] = record.headers.filter((h) => h.key !== ENVELOPE_HEADER);
  if (envelope.sealedHeaders !== null) {
    try {
      headers.push(...decodeHeaderList(open(Section.HEADERS, envelope.sealedHeaders)));
    } catch (e) {
      if (e instanceof E2eError) throw e;
      throw new E2eError('malformed', (e as Error).message);
    }
  }
  return { key, value, headers };
}
