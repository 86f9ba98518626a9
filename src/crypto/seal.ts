/**
 * Sealing of a record's parts under its data key (README, "Sealing"): AES-256-GCM with a nonce derived
 * from the envelope's nonce base and an AAD that binds the topic, the record key as stored and the
 * envelope's head, so a sealed part moved to another topic, another key or another envelope fails to open.
 *
 *   nonce(section) = nonce base with its last byte XOR section        (0 value, 1 key, 2 headers)
 *   AAD(section)   = "ledgerline-e2e/1" | u8 section | u16 len, topic (UTF-8) | i32 len (-1 = null), key | head
 */
import { createCipheriv, createDecipheriv, type KeyObject } from 'node:crypto';
import { DATA_KEY_BYTES, NONCE_BYTES, Section, TAG_BYTES } from './envelope.js';

const AAD_LABEL = Buffer.from('ledgerline-e2e/1', 'ascii');

export function sectionNonce(nonceBase: Buffer, section: Section): Buffer {
  const n = Buffer.from(nonceBase);
  n[NONCE_BYTES - 1] ^= section;
  return n;
}

export function sectionAad(section: Section, topic: string, storedKey: Buffer | null, head: Buffer): Buffer {
  const topicBytes = Buffer.byteLength(topic, 'utf8');
  if (topicBytes > 0xffff) throw new RangeError('topic name too long');
  // One allocation laid out in place: this runs for every sealed and every opened part.
  const out = Buffer.allocUnsafe(AAD_LABEL.length + 3 + topicBytes + 4 + (storedKey?.length ?? 0) + head.length);
  let pos = AAD_LABEL.copy(out, 0);
  out[pos++] = section;
  pos = out.writeUInt16BE(topicBytes, pos);
  pos += out.write(topic, pos, 'utf8');
  pos = out.writeInt32BE(storedKey === null ? -1 : storedKey.length, pos);
  if (storedKey !== null) pos += storedKey.copy(out, pos);
  head.copy(out, pos);
  return out;
}

/**
 * A data key as the sealing functions take it: its 32 bytes, or a KeyObject made of them once
 * (createSecretKey), which spares Node.js importing the raw key again for every part.
 */
export type DataKeyMaterial = Buffer | KeyObject;

function checkedKey(dataKey: DataKeyMaterial): DataKeyMaterial {
  const size = Buffer.isBuffer(dataKey) ? dataKey.length : dataKey.symmetricKeySize;
  if (size !== DATA_KEY_BYTES) throw new RangeError(`a data key is ${DATA_KEY_BYTES} bytes`);
  return dataKey;
}

/** The sealed form of `plaintext`: ciphertext, then the 16-byte tag. */
export function sealPart(dataKey: DataKeyMaterial, nonceBase: Buffer, section: Section, aad: Buffer, plaintext: Buffer): Buffer {
  const c = createCipheriv('aes-256-gcm', checkedKey(dataKey), sectionNonce(nonceBase, section), { authTagLength: TAG_BYTES });
  c.setAAD(aad);
  const body = c.update(plaintext);
  const rest = c.final(); // empty for GCM, which is a stream mode
  const tag = c.getAuthTag();
  const out = Buffer.allocUnsafe(body.length + rest.length + TAG_BYTES);
  out.set(body, 0);
  out.set(rest, body.length);
  out.set(tag, body.length + rest.length);
  return out;
}

/** Opens a sealed part; throws when it fails authentication (a wrong key, or anything bound by the AAD changed). */
export function openPart(dataKey: DataKeyMaterial, nonceBase: Buffer, section: Section, aad: Buffer, sealed: Buffer): Buffer {
  if (sealed.length < TAG_BYTES) throw new RangeError('a sealed part is at least its tag');
  const d = createDecipheriv('aes-256-gcm', checkedKey(dataKey), sectionNonce(nonceBase, section), { authTagLength: TAG_BYTES });
  d.setAAD(aad);
  d.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  const body = d.update(sealed.subarray(0, sealed.length - TAG_BYTES));
  const rest = d.final(); // throws unless the tag authenticates; empty for GCM
  return rest.length === 0 ? body : Buffer.concat([body, rest]);
}
