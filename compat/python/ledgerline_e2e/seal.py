"""Sealing of a record's parts under its data key (src/crypto/README.md, "Sealing"): AES-256-GCM with a
nonce derived from the envelope's nonce base and an AAD binding the topic, the record key as stored and
the envelope's head, so a sealed part moved to another topic, key or envelope does not open.

  nonce(section) = nonce base with its last byte XOR section        (0 value, 1 key, 2 headers)
  AAD(section)   = "ledgerline-e2e/1" | u8 section | u16 len, topic (UTF-8) | i32 len (-1 = null), key | head
  sealed         = ciphertext | tag (16)
"""
import struct
from typing import Optional

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from .envelope import DATA_KEY_BYTES, NONCE_BYTES, TAG_BYTES

AAD_LABEL = b'ledgerline-e2e/1'


def section_nonce(nonce_base: bytes, section: int) -> bytes:
    if len(nonce_base) != NONCE_BYTES:
        raise ValueError('a nonce base is %d bytes' % NONCE_BYTES)
    n = bytearray(nonce_base)
    n[NONCE_BYTES - 1] ^= section
    return bytes(n)


def section_aad(section: int, topic: str, stored_key: Optional[bytes], head: bytes) -> bytes:
    t = topic.encode('utf-8')
    if len(t) > 0xFFFF:
        raise ValueError('topic name too long')
    key_part = struct.pack('>i', -1) if stored_key is None else struct.pack('>i', len(stored_key)) + bytes(stored_key)
    return b''.join([AAD_LABEL, bytes([section]), struct.pack('>H', len(t)), t, key_part, bytes(head)])


def seal_part(data_key: bytes, nonce_base: bytes, section: int, aad: bytes, plaintext: bytes) -> bytes:
    """The sealed form of plaintext: ciphertext, then the 16-byte tag (AESGCM appends it)."""
    if len(data_key) != DATA_KEY_BYTES:
        raise ValueError('a data key is %d bytes' % DATA_KEY_BYTES)
    return AESGCM(bytes(data_key)).encrypt(section_nonce(nonce_base, section), bytes(plaintext), aad)


def open_part(data_key: bytes, nonce_base: bytes, section: int, aad: bytes, sealed: bytes) -> bytes:
    """Opens a sealed part; raises cryptography's InvalidTag when it does not authenticate."""
    if len(sealed) < TAG_BYTES:
        raise ValueError('a sealed part is at least its tag')
    return AESGCM(bytes(data_key)).decrypt(section_nonce(nonce_base, section), bytes(sealed), aad)
