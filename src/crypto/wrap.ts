/**
 * Wrapping a data key for one recipient (README, "Wrapping"). Two algorithms, picked by the recipient's key:
 *
 * RSA-OAEP-256 (an RSA key of at least 2048 bits):
 *   wrapped = RSAES-OAEP(hash SHA-256, MGF1 with SHA-256, label = data key id)(data key)
 *
 * X25519-HKDF-SHA256-A256GCM (an X25519 key):
 *   e        = a fresh X25519 key pair; shared = X25519(e.private, recipient.public)
 *   kek      = HKDF-SHA256(ikm = shared, salt = e.public | recipient.public,
 *                          info = "ledgerline-e2e/1 x25519" | data key id, length 32)
 *   wrapped  = e.public (32) | nonce (12, random) | AES-256-GCM(kek, nonce, aad = recipient key id)(data key) | tag (16)
 *
 * Both bind the data key id, so a wrapped key copied into another envelope does not unwrap there.
 */
import { constants, createCipheriv, createDecipheriv, createPublicKey, diffieHellman, generateKeyPairSync, hkdfSync, privateDecrypt, publicEncrypt, randomBytes, type KeyObject } from 'node:crypto';
import { DATA_KEY_BYTES, NONCE_BYTES, TAG_BYTES, WrapAlgorithm } from './envelope.js';

const X25519_INFO = Buffer.from('ledgerline-e2e/1 x25519', 'ascii');
const X25519_WRAPPED_BYTES = 32 + NONCE_BYTES + DATA_KEY_BYTES + TAG_BYTES;
export const MIN_RSA_BITS = 2048;

/** The wrap algorithm a recipient's public (or private) key calls for; throws for a key of another kind. */
export function wrapAlgorithmOf(key: KeyObject): WrapAlgorithm {
  if (key.asymmetricKeyType === 'rsa') {
    const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
    if (bits < MIN_RSA_BITS) throw new RangeError(`an RSA recipient key needs at least ${MIN_RSA_BITS} bits, this one has ${bits}`);
    return WrapAlgorithm.RSA_OAEP_256;
  }
  if (key.asymmetricKeyType === 'x25519') return WrapAlgorithm.X25519_HKDF_SHA256_A256GCM;
  throw new RangeError(`a recipient key must be RSA or X25519, not ${key.asymmetricKeyType ?? key.type}`);
}

/** The 32 raw bytes of an X25519 public key. */
export function rawX25519Public(key: KeyObject): Buffer {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  const jwk = pub.export({ format: 'jwk' });
  return Buffer.from(String(jwk.x), 'base64url');
}

/** Randomness a wrap uses, injectable only so that test vectors are reproducible. */
export interface WrapRandomness {
  /** X25519: the ephemeral private key. */
  ephemeral?: KeyObject;
  /** X25519: the key-wrap nonce. */
  nonce?: Buffer;
}

export function wrapDataKey(recipient: KeyObject, keyId: string, dataKeyId: Buffer, dataKey: Buffer, random: WrapRandomness = {}): { algorithm: WrapAlgorithm; wrapped: Buffer } {
  const algorithm = wrapAlgorithmOf(recipient);
  if (algorithm === WrapAlgorithm.RSA_OAEP_256) {
    const wrapped = publicEncrypt({ key: recipient, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256', oaepLabel: dataKeyId }, dataKey);
    return { algorithm, wrapped };
  }
  const ephemeral = random.ephemeral ?? generateKeyPairSync('x25519').privateKey;
  const ephemeralPublic = rawX25519Public(ephemeral);
  const recipientPublic = rawX25519Public(recipient);
  const shared = diffieHellman({ privateKey: ephemeral, publicKey: recipient.type === 'private' ? createPublicKey(recipient) : recipient });
  const kek = x25519Kek(shared, ephemeralPublic, recipientPublic, dataKeyId);
  const nonce = random.nonce ?? randomBytes(NONCE_BYTES);
  const c = createCipheriv('aes-256-gcm', kek, nonce, { authTagLength: TAG_BYTES });
  c.setAAD(Buffer.from(keyId, 'utf8'));
  const wrapped = Buffer.concat([ephemeralPublic, nonce, c.update(dataKey), c.final(), c.getAuthTag()]);
  return { algorithm, wrapped };
}

function x25519Kek(shared: Buffer, ephemeralPublic: Buffer, recipientPublic: Buffer, dataKeyId: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', shared, Buffer.concat([ephemeralPublic, recipientPublic]), Buffer.concat([X25519_INFO, dataKeyId]), 32));
}

/** Unwraps with the recipient's private key; throws when the wrapped key does not open (another key, tampering). */
export function unwrapDataKey(privateKey: KeyObject, keyId: string, algorithm: WrapAlgorithm, dataKeyId: Buffer, wrapped: Buffer): Buffer {
  if (algorithm !== wrapAlgorithmOf(privateKey)) throw new Error(`key ${keyId} is ${privateKey.asymmetricKeyType}, the data key was wrapped with algorithm ${algorithm}`);
  let key: Buffer;
  if (algorithm === WrapAlgorithm.RSA_OAEP_256) {
    key = privateDecrypt({ key: privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256', oaepLabel: dataKeyId }, wrapped);
  } else {
    if (wrapped.length !== X25519_WRAPPED_BYTES) throw new Error(`an X25519 wrapped key is ${X25519_WRAPPED_BYTES} bytes, got ${wrapped.length}`);
    const ephemeralPublic = wrapped.subarray(0, 32);
    const nonce = wrapped.subarray(32, 32 + NONCE_BYTES);
    const sealed = wrapped.subarray(32 + NONCE_BYTES, 32 + NONCE_BYTES + DATA_KEY_BYTES);
    const tag = wrapped.subarray(32 + NONCE_BYTES + DATA_KEY_BYTES);
    const ephemeral = createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: ephemeralPublic.toString('base64url') }, format: 'jwk' });
    const shared = diffieHellman({ privateKey, publicKey: ephemeral });
    const kek = x25519Kek(shared, ephemeralPublic, rawX25519Public(privateKey), dataKeyId);
    const d = createDecipheriv('aes-256-gcm', kek, nonce, { authTagLength: TAG_BYTES });
    d.setAAD(Buffer.from(keyId, 'utf8'));
    d.setAuthTag(tag);
    key = Buffer.concat([d.update(sealed), d.final()]);
  }
  if (key.length !== DATA_KEY_BYTES) throw new Error(`an unwrapped data key is ${DATA_KEY_BYTES} bytes, got ${key.length}`);
  return key;
}
