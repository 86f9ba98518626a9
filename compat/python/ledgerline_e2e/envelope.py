"""The end-to-end envelope, version 1: the binary value of a record's ``ledgerline.e2e`` header
(src/crypto/README.md, "The envelope header"). This module lays out and parses bytes only; it holds no
key and does no cryptography.

  offset size  field
  0      1     version            0x01
  1      1     cipher             0x01 = AES-256-GCM (96-bit nonce, 128-bit tag)
  2      1     flags              0x01 KEYS, 0x02 PSEUDONYM, 0x04 HEADERS; other bits must be 0
  3      16    data key id
  19     12    nonce base
  31     ...   if KEYS:      u8 n (1..255), n x { u8 len, key id, u8 wrap, u16 len, wrapped key }
         ...   if PSEUDONYM: u8 len (1..255), pseudonym key id
         ----- end of the head: bytes [0, head end) are in every AAD -----
         ...   if PSEUDONYM: u32 len (>= 16), sealed original key   (section 1)
         ...   if HEADERS:   u32 len (>= 16), sealed header list    (section 2)
         end   nothing may follow

Integers are big-endian and unsigned.
"""
import struct
from typing import NamedTuple, Optional, Sequence, Tuple

from .errors import EnvelopeFormatError

ENVELOPE_HEADER = 'ledgerline.e2e'
ENVELOPE_VERSION = 1
CIPHER_AES_256_GCM = 1

FLAG_KEYS = 0x01
FLAG_PSEUDONYM = 0x02
FLAG_HEADERS = 0x04
KNOWN_FLAGS = FLAG_KEYS | FLAG_PSEUDONYM | FLAG_HEADERS

DATA_KEY_ID_BYTES = 16
NONCE_BYTES = 12
TAG_BYTES = 16
DATA_KEY_BYTES = 32
FIXED_HEAD_BYTES = 3 + DATA_KEY_ID_BYTES + NONCE_BYTES

WRAP_RSA_OAEP_256 = 1
WRAP_X25519_HKDF_SHA256_A256GCM = 2
WRAP_ALGORITHMS = (WRAP_RSA_OAEP_256, WRAP_X25519_HKDF_SHA256_A256GCM)

# Sections a data key seals, which pick the nonce and the AAD (README, "Sealing").
SECTION_VALUE = 0
SECTION_KEY = 1
SECTION_HEADERS = 2
SECTION_NAMES = {SECTION_VALUE: 'value', SECTION_KEY: 'key', SECTION_HEADERS: 'headers'}


class WrappedKey(NamedTuple):
    """A data key wrapped for one recipient."""
    key_id: str
    algorithm: int
    wrapped: bytes


class Envelope(NamedTuple):
    version: int
    cipher: int
    data_key_id: bytes
    nonce_base: bytes
    # Empty when the envelope references a data key announced by an earlier record.
    wrapped_keys: Tuple[WrappedKey, ...]
    pseudonym_key_id: Optional[str]
    sealed_key: Optional[bytes]
    sealed_headers: Optional[bytes]
    # The head's bytes: what every sealed part's AAD covers.
    head: bytes


def _id_bytes(what, key_id):
    b = key_id.encode('utf-8')
    if not 1 <= len(b) <= 255:
        raise ValueError('%s must be 1 to 255 bytes of UTF-8, got %d' % (what, len(b)))
    return b


def encode_head(data_key_id: bytes, nonce_base: bytes, wrapped_keys: Sequence[WrappedKey],
                pseudonym_key_id: Optional[str], seals_headers: bool) -> bytes:
    """Lays out an envelope's head."""
    if len(data_key_id) != DATA_KEY_ID_BYTES:
        raise ValueError('data key id must be %d bytes' % DATA_KEY_ID_BYTES)
    if len(nonce_base) != NONCE_BYTES:
        raise ValueError('nonce base must be %d bytes' % NONCE_BYTES)
    if len(wrapped_keys) > 255:
        raise ValueError('at most 255 recipients')
    flags = 0
    parts = []
    if wrapped_keys:
        flags |= FLAG_KEYS
        parts.append(bytes([len(wrapped_keys)]))
        for w in wrapped_keys:
            kid = _id_bytes('recipient key id', w.key_id)
            if w.algorithm not in WRAP_ALGORITHMS:
                raise ValueError('unknown wrap algorithm %r' % (w.algorithm,))
            if not 1 <= len(w.wrapped) <= 0xFFFF:
                raise ValueError('a wrapped key must be 1 to 65535 bytes')
            parts += [bytes([len(kid)]), kid, bytes([w.algorithm]), struct.pack('>H', len(w.wrapped)), bytes(w.wrapped)]
    if pseudonym_key_id is not None:
        flags |= FLAG_PSEUDONYM
        kid = _id_bytes('pseudonym key id', pseudonym_key_id)
        parts += [bytes([len(kid)]), kid]
    if seals_headers:
        flags |= FLAG_HEADERS
    return b''.join([bytes([ENVELOPE_VERSION, CIPHER_AES_256_GCM, flags]), bytes(data_key_id), bytes(nonce_base)] + parts)


def encode_envelope(head: bytes, sealed_key: Optional[bytes], sealed_headers: Optional[bytes]) -> bytes:
    """The whole header value: the head, then the sealed parts its flags announce."""
    parts = [head]
    if sealed_key is not None:
        parts += [struct.pack('>I', len(sealed_key)), sealed_key]
    if sealed_headers is not None:
        parts += [struct.pack('>I', len(sealed_headers)), sealed_headers]
    return b''.join(parts)


class _Reader:
    """Reads the value front to back, checking every length against the bytes present before it reads."""

    def __init__(self, value):
        self.value = value
        self.pos = 0

    def need(self, n, what):
        if len(self.value) - self.pos < n:
            raise EnvelopeFormatError('envelope ends inside %s (at byte %d, %d bytes in all)' % (what, self.pos, len(self.value)))

    def u8(self, what):
        self.need(1, what)
        b = self.value[self.pos]
        self.pos += 1
        return b

    def take(self, n, what):
        self.need(n, what)
        b = self.value[self.pos:self.pos + n]
        self.pos += n
        return b

    def key_id(self, what):
        n = self.u8('the length of ' + what)
        if n == 0:
            raise EnvelopeFormatError('empty ' + what)
        return self.take(n, what).decode('utf-8', errors='replace')

    def sealed(self, what):
        n = struct.unpack('>I', self.take(4, 'the length of ' + what))[0]
        if n < TAG_BYTES:
            raise EnvelopeFormatError('%s is %d bytes, shorter than its %d-byte tag' % (what, n, TAG_BYTES))
        return self.take(n, what)


def decode_envelope(value: bytes) -> Envelope:
    """Parses a header value; never reads past it. Raises EnvelopeFormatError."""
    value = bytes(value)
    r = _Reader(value)
    r.need(FIXED_HEAD_BYTES, 'the fixed head')
    version, cipher, flags = value[0], value[1], value[2]
    if version != ENVELOPE_VERSION:
        raise EnvelopeFormatError('unknown envelope version %d' % version)
    if cipher != CIPHER_AES_256_GCM:
        raise EnvelopeFormatError('unknown cipher %d' % cipher)
    if flags & ~KNOWN_FLAGS:
        raise EnvelopeFormatError('unknown flags 0x%x' % flags)
    data_key_id = value[3:3 + DATA_KEY_ID_BYTES]
    nonce_base = value[3 + DATA_KEY_ID_BYTES:FIXED_HEAD_BYTES]
    r.pos = FIXED_HEAD_BYTES
    wrapped = []
    if flags & FLAG_KEYS:
        n = r.u8('the recipient count')
        if n == 0:
            raise EnvelopeFormatError('KEYS is set but no recipient follows')
        for i in range(n):
            key_id = r.key_id("recipient %d's key id" % i)
            r.need(3, "recipient %d's wrap algorithm and length" % i)
            algorithm = value[r.pos]
            if algorithm not in WRAP_ALGORITHMS:
                raise EnvelopeFormatError('recipient %d has unknown wrap algorithm %d' % (i, algorithm))
            length = struct.unpack_from('>H', value, r.pos + 1)[0]
            r.pos += 3
            if length == 0:
                raise EnvelopeFormatError("recipient %d's wrapped key is empty" % i)
            wrapped.append(WrappedKey(key_id, algorithm, r.take(length, "recipient %d's wrapped key" % i)))
    pseudonym_key_id = r.key_id('the pseudonym key id') if flags & FLAG_PSEUDONYM else None
    head = value[:r.pos]
    sealed_key = r.sealed('the sealed key') if pseudonym_key_id is not None else None
    sealed_headers = r.sealed('the sealed headers') if flags & FLAG_HEADERS else None
    if r.pos != len(value):
        raise EnvelopeFormatError('%d bytes follow the envelope' % (len(value) - r.pos))
    return Envelope(version, cipher, data_key_id, nonce_base, tuple(wrapped), pseudonym_key_id, sealed_key,
                    sealed_headers, head)


def encode_header_list(headers: Sequence[Tuple[str, Optional[bytes]]]) -> bytes:
    """The plaintext of the sealed-headers section:
    u16 count, then count x { u16 name length, name (UTF-8), i32 value length (-1 = null), value }."""
    if len(headers) > 0xFFFF:
        raise ValueError('at most 65535 sealed headers')
    parts = [struct.pack('>H', len(headers))]
    for name, value in headers:
        nb = name.encode('utf-8')
        if len(nb) > 0xFFFF:
            raise ValueError('a sealed header name must be at most 65535 bytes')
        parts += [struct.pack('>H', len(nb)), nb, struct.pack('>i', -1 if value is None else len(value))]
        if value is not None:
            parts.append(bytes(value))
    return b''.join(parts)


def decode_header_list(b: bytes):
    """Parses what encode_header_list wrote (after authentication, so a failure here is a producer's bug)."""
    def need(pos, n):
        if len(b) - pos < n:
            raise EnvelopeFormatError('sealed header list ends early')
    need(0, 2)
    count = struct.unpack_from('>H', b, 0)[0]
    pos = 2
    out = []
    for i in range(count):
        need(pos, 2)
        name_len = struct.unpack_from('>H', b, pos)[0]
        pos += 2
        need(pos, name_len + 4)
        name = b[pos:pos + name_len].decode('utf-8', errors='replace')
        pos += name_len
        value_len = struct.unpack_from('>i', b, pos)[0]
        pos += 4
        if value_len < -1:
            raise EnvelopeFormatError('sealed header %d has length %d' % (i, value_len))
        if value_len == -1:
            out.append((name, None))
            continue
        need(pos, value_len)
        out.append((name, bytes(b[pos:pos + value_len])))
        pos += value_len
    if pos != len(b):
        raise EnvelopeFormatError('bytes follow the sealed header list')
    return out
