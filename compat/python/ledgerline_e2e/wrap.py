"""Wrapping a data key for one recipient (src/crypto/README.md, "Wrapping"), picked by the recipient's key:

RSA-OAEP-256 (an RSA key of at least 2048 bits):
  wrapped = RSAES-OAEP(hash SHA-256, MGF1 with SHA-256, label = data key id)(data key)

X25519-HKDF-SHA256-A256GCM (an X25519 key):
  e       = a fresh X25519 key pair; shared = X25519(e.private, recipient public)
  kek     = HKDF-SHA256(IKM = shared, salt = e.public | recipient public,
                        info = "ledgerline-e2e/1 x25519" | data key id, L = 32)
  wrapped = e.public (32) | nonce (12) | AES-256-GCM(kek, nonce, AAD = recipient key id)(data key) | tag (16)

Both bind the data key id, so a wrapped key copied into another envelope does not unwrap there.
"""
import os
from typing import Optional

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa, x25519
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from .envelope import (DATA_KEY_BYTES, NONCE_BYTES, TAG_BYTES, WRAP_RSA_OAEP_256, WRAP_X25519_HKDF_SHA256_A256GCM,
                       WrappedKey)

X25519_INFO = b'ledgerline-e2e/1 x25519'
X25519_WRAPPED_BYTES = 32 + NONCE_BYTES + DATA_KEY_BYTES + TAG_BYTES
MIN_RSA_BITS = 2048


def wrap_algorithm_of(key) -> int:
    """The wrap algorithm a recipient's public (or private) key calls for; raises for a key of another kind."""
    if isinstance(key, (rsa.RSAPublicKey, rsa.RSAPrivateKey)):
        if key.key_size < MIN_RSA_BITS:
            raise ValueError('an RSA recipient key needs at least %d bits, this one has %d' % (MIN_RSA_BITS, key.key_size))
        return WRAP_RSA_OAEP_256
    if isinstance(key, (x25519.X25519PublicKey, x25519.X25519PrivateKey)):
        return WRAP_X25519_HKDF_SHA256_A256GCM
    raise ValueError('a recipient key must be RSA or X25519, not %s' % type(key).__name__)


def _oaep(data_key_id):
    return padding.OAEP(mgf=padding.MGF1(algorithm=hashes.SHA256()), algorithm=hashes.SHA256(), label=bytes(data_key_id))


def _raw_public(key) -> bytes:
    pub = key.public_key() if isinstance(key, x25519.X25519PrivateKey) else key
    return pub.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def _kek(shared, ephemeral_public, recipient_public, data_key_id):
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=ephemeral_public + recipient_public,
                info=X25519_INFO + bytes(data_key_id)).derive(shared)


def wrap_data_key(recipient, key_id: str, data_key_id: bytes, data_key: bytes,
                  ephemeral: Optional[x25519.X25519PrivateKey] = None, nonce: Optional[bytes] = None) -> WrappedKey:
    """Wraps data_key for the recipient's public key. ephemeral and nonce (X25519) are injectable only so
    that test vectors are reproducible; leave them None."""
    algorithm = wrap_algorithm_of(recipient)
    if algorithm == WRAP_RSA_OAEP_256:
        pub = recipient.public_key() if isinstance(recipient, rsa.RSAPrivateKey) else recipient
        return WrappedKey(key_id, algorithm, pub.encrypt(bytes(data_key), _oaep(data_key_id)))
    pub = recipient.public_key() if isinstance(recipient, x25519.X25519PrivateKey) else recipient
    ephemeral = ephemeral if ephemeral is not None else x25519.X25519PrivateKey.generate()
    nonce = nonce if nonce is not None else os.urandom(NONCE_BYTES)
    ephemeral_public = _raw_public(ephemeral)
    kek = _kek(ephemeral.exchange(pub), ephemeral_public, _raw_public(pub), data_key_id)
    sealed = AESGCM(kek).encrypt(bytes(nonce), bytes(data_key), key_id.encode('utf-8'))
    return WrappedKey(key_id, algorithm, ephemeral_public + bytes(nonce) + sealed)


def unwrap_data_key(private_key, w: WrappedKey, data_key_id: bytes) -> bytes:
    """Unwraps with the recipient's private key; raises when it does not open (another key, tampering)."""
    if w.algorithm != wrap_algorithm_of(private_key):
        raise ValueError('key %s is %s, the data key was wrapped with algorithm %d'
                         % (w.key_id, type(private_key).__name__, w.algorithm))
    if w.algorithm == WRAP_RSA_OAEP_256:
        key = private_key.decrypt(bytes(w.wrapped), _oaep(data_key_id))
    else:
        if len(w.wrapped) != X25519_WRAPPED_BYTES:
            raise ValueError('an X25519 wrapped key is %d bytes, got %d' % (X25519_WRAPPED_BYTES, len(w.wrapped)))
        ephemeral_public = bytes(w.wrapped[:32])
        nonce = bytes(w.wrapped[32:32 + NONCE_BYTES])
        shared = private_key.exchange(x25519.X25519PublicKey.from_public_bytes(ephemeral_public))
        kek = _kek(shared, ephemeral_public, _raw_public(private_key), data_key_id)
        key = AESGCM(kek).decrypt(nonce, bytes(w.wrapped[32 + NONCE_BYTES:]), w.key_id.encode('utf-8'))
    if len(key) != DATA_KEY_BYTES:
        raise ValueError('an unwrapped data key is %d bytes, got %d' % (DATA_KEY_BYTES, len(key)))
    return key


def load_public_key(pem):
    """An SPKI PEM (str or bytes) as a key object; raises for a key that is not RSA >= 2048 bits or X25519."""
    key = serialization.load_pem_public_key(pem.encode('ascii') if isinstance(pem, str) else pem)
    wrap_algorithm_of(key)
    return key


def load_private_key(pem):
    """A PKCS#8 PEM (str or bytes, unencrypted) as a key object."""
    key = serialization.load_pem_private_key(pem.encode('ascii') if isinstance(pem, str) else pem, password=None)
    wrap_algorithm_of(key)
    return key
