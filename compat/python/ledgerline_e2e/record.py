"""A record sealed and opened as src/crypto/README.md specifies, over a client-neutral record shape: the
deterministic core every implementation shares and the test vectors (test/vectors/e2e/) pin down.
Randomness and keys come in as parameters; RecordEncryptor and RecordDecryptor supply them."""
import hashlib
import hmac
from typing import NamedTuple, Optional, Sequence, Tuple

from cryptography.exceptions import InvalidTag

from .envelope import (ENVELOPE_HEADER, SECTION_HEADERS, SECTION_KEY, SECTION_NAMES, SECTION_VALUE, Envelope,
                       EnvelopeFormatError, WrappedKey, decode_envelope, decode_header_list, encode_envelope,
                       encode_head, encode_header_list)
from .errors import E2eError
from .seal import open_part, seal_part, section_aad

Header = Tuple[str, Optional[bytes]]


class E2eRecord(NamedTuple):
    """A record as every client has it: key, value, headers (name, value) in order."""
    key: Optional[bytes]
    value: Optional[bytes]
    headers: Tuple[Header, ...] = ()


class Pseudonym(NamedTuple):
    key_id: str
    secret: bytes


def pseudonym_of(secret: bytes, key: bytes) -> bytes:
    """The deterministic pseudonym of a key: HMAC-SHA256(secret, key)."""
    return hmac.new(bytes(secret), bytes(key), hashlib.sha256).digest()


def seal_record(record: E2eRecord, topic: str, data_key_id: bytes, data_key: bytes, nonce_base: bytes,
                wrapped_keys: Sequence[WrappedKey], pseudonym: Optional[Pseudonym] = None,
                seal_headers: Sequence[str] = ()) -> E2eRecord:
    """The stored form of record. wrapped_keys empty: the envelope references the data key."""
    names = set(seal_headers or ())
    clear, sealed = [], []
    for h in record.headers:
        if h[0] == ENVELOPE_HEADER:
            raise E2eError('malformed', 'the record already has a %s header' % ENVELOPE_HEADER)
        (sealed if h[0] in names else clear).append(h)
    if record.key is None:
        pseudonym = None
    stored_key = pseudonym_of(pseudonym.secret, record.key) if pseudonym is not None else record.key
    head = encode_head(data_key_id, nonce_base, wrapped_keys, pseudonym.key_id if pseudonym is not None else None,
                       bool(sealed))

    def seal(section, plaintext):
        return seal_part(data_key, nonce_base, section, section_aad(section, topic, stored_key, head), plaintext)

    sealed_key = seal(SECTION_KEY, record.key) if pseudonym is not None else None
    sealed_headers = seal(SECTION_HEADERS, encode_header_list(sealed)) if sealed else None
    value = None if record.value is None else seal(SECTION_VALUE, record.value)
    return E2eRecord(stored_key, value, tuple(clear) + ((ENVELOPE_HEADER, encode_envelope(head, sealed_key, sealed_headers)),))


def envelope_of(record: E2eRecord) -> Optional[Envelope]:
    """The record's envelope; None when it has none (plaintext). Raises E2eError('malformed') when it is
    malformed, null or repeated."""
    found = []
    for name, value in record.headers:
        if name == ENVELOPE_HEADER:
            found.append(value)
    if not found:
        return None
    if len(found) > 1:
        raise E2eError('malformed', 'the record has more than one %s header' % ENVELOPE_HEADER)
    if found[0] is None:
        raise E2eError('malformed', 'the %s header has a null value' % ENVELOPE_HEADER)
    try:
        return decode_envelope(found[0])
    except EnvelopeFormatError as e:
        raise E2eError('malformed', str(e)) from None


def open_record(record: E2eRecord, topic: str, envelope: Envelope, data_key: bytes) -> E2eRecord:
    """Opens a stored record with its data key; raises E2eError('not-authentic') when a part does not open.
    Clear headers come first (without the envelope), then the sealed ones."""
    def open_(section, sealed):
        try:
            return open_part(data_key, envelope.nonce_base, section,
                             section_aad(section, topic, record.key, envelope.head), sealed)
        except (InvalidTag, ValueError):
            raise E2eError('not-authentic', "the record's %s does not authenticate under data key %s (topic, key or "
                           'envelope changed, or a wrong key)' % (SECTION_NAMES[section], envelope.data_key_id.hex())) from None

    key = open_(SECTION_KEY, envelope.sealed_key) if envelope.sealed_key is not None else record.key
    value = None if record.value is None else open_(SECTION_VALUE, record.value)
    headers = [h for h in record.headers if h[0] != ENVELOPE_HEADER]
    if envelope.sealed_headers is not None:
        plain = open_(SECTION_HEADERS, envelope.sealed_headers)
        try:
            headers += decode_header_list(plain)
        except EnvelopeFormatError as e:
            raise E2eError('malformed', str(e)) from None
    return E2eRecord(key, value, tuple(headers))
