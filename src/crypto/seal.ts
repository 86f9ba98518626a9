/**
 * Sealing of a record's parts under its data key (README, "Sealing"): AES-256-GCM with a nonce derived
 * from the envelope's nonce base and an AAD that binds the topic, the record key as stored and the
 * envelope's head, so a sealed part moved to another topic, another key or another envelope fails to open.
 *
 *   nonce(section) = nonce base with its last byte XOR section        (0 value, 1 key, 2 headers)
 *   AAD(section)   = "ledgerline-e2e/1" | u8 section | u16 len, topic (UTF-8) | i32 len (-1 = null), key | head
 */
import { createCipheriv, createDecipheriv } from 'node:crypto';
import { DATA_KEY_BYTES, NONCE_BYTES, Section, TAG_BYTES } from './envelope.js';

const AAD_LABEL = Buffer.from('ledgerline-e2e/1', 'ascii');

export function sectionNonce(nonceBase: Buffer, section: Section): Buffer {
  const n = Buffer.from(nonceBase);
  n[NONCE_BYTES - 1] ^= section;
  return n;
}

export function sectionAad(section: Section, topic: string, storedKey: Buffer | null, head: Buffer): Buffer {
  const t = Buffer.from(topic, 'utf8');
  if (t.length > 0xffff) throw new RangeError('topic name too long');
  const fixed = Buffer.alloc(AAD_LABEL.length + 1 + 2);
  AAD_LABEL.copy(fixed);
  fixed[AAD_LABEL.length] = section;
  fixed.writeUInt16BE(t.length, AAD_LABEL.length + 1);
  const keyLen = Buffer.alloc(4);
  keyLen.writeInt32BE(storedKey === null ? -1 : storedKey.length);
  return Buffer.concat(storedKey === null ? [fixed, t, keyLen, head] : [fixed, t, keyLen, storedKey, head]);
}

/** The sealed form of `plaintext`: ciphertext, then the 16-byte tag. */
export function sealPart(dataKey: Buffer, nonceBase: Buffer, section: Section, aad: Buffer, plaintext: Buffer): Buffer {
  if (dataKey.length !== DATA_KEY_BYTES) throw new RangeError(`a data key is ${DATA_KEY_BYTES} bytes`);
  const c = createCipheriv('aes-256-gcm', dataKey, sectionNonce(nonceBase, section), { authTagLength: TAG_BYTES });
  c.setAAD(aad);
  const out = Buffer.concat([c.update(plaintext), c.final(), c.getAuthTag()]);
  return out;
}

/** Opens a sealed part; throws when it fails authentication (a wrong key, or anything bound by the AAD changed). */
export function openPart(dataKey: Buffer, nonceBase: Buffer, section: Section, aad: Buffer, sealed: Buffer): Buffer {
  if (sealed.length < TAG_BYTES) throw new RangeError('a sealed part is at least its tag');
  const d = createDecipheriv('aes-256-gcm', dataKey, sectionNonce(nonceBase, section), { authTagLength: TAG_BYTES });
  d.setAAD(aad);
  d.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  return Buffer.concat([d.update(sealed.subarray(0, sealed.length - TAG_BYTES)), d.final()]);
}
