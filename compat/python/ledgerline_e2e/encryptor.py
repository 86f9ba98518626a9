"""The producer side: one data key at a time, rotated by age and by record count, wrapped once per
recipient when it is made (as Pulsar's MessageCrypto does per key rotation), and a fresh random nonce base
per record. Recipients' key ids are resolved when a data key is made, so a recipient rotated with
``ledgerline keys rotate`` is used from the next data key on.

Nonce budget: a record uses up to three nonces derived from one random 96-bit base, so a data key seals at
most 2^30 records (3 x 2^30 < 2^32 random nonces, NIST SP 800-38D's bound for random IVs);
rotate_after_records is capped there.
"""
import os
import threading
import time
from typing import Optional, Sequence

from .envelope import DATA_KEY_BYTES, DATA_KEY_ID_BYTES, NONCE_BYTES
from .record import E2eRecord, Pseudonym, pseudonym_of, seal_record
from .wrap import wrap_data_key

MAX_RECORDS_PER_DATA_KEY = 2 ** 30
DEFAULT_ROTATE_AFTER_S = 3600.0
DEFAULT_ROTATE_AFTER_RECORDS = 1_000_000


class _DataKey:
    __slots__ = ('id', 'key', 'wrapped', 'made_at', 'sealed', 'since_announced')

    def __init__(self, id_, key, wrapped, made_at):
        self.id = id_
        self.key = key
        self.wrapped = wrapped
        self.made_at = made_at
        self.sealed = 0
        self.since_announced = {}  # records since this key was last announced, per topic


class RecordEncryptor:
    """Seals records for the given recipients. Thread-safe.

    keys: a KeyReader; recipients: key ids or names (resolved to their newest version), 1 to 255;
    pseudonym_key_id: replace record keys by HMAC-SHA256 pseudonyms under this secret; seal_headers: header
    names sealed with the value; rotate_after_s (default 1 hour) and rotate_after_records (default
    1,000,000, at most 2^30) bound a data key's life; announce_every: carry the wrapped keys in every n-th
    record of a topic and only reference the data key in between (default 1: every record carries them,
    which compacted topics and consumers starting anywhere need); clock: seconds, for tests.
    """

    def __init__(self, keys, recipients: Sequence[str], pseudonym_key_id: Optional[str] = None,
                 seal_headers: Sequence[str] = (), rotate_after_s: float = DEFAULT_ROTATE_AFTER_S,
                 rotate_after_records: int = DEFAULT_ROTATE_AFTER_RECORDS, announce_every: int = 1, clock=time.monotonic):
        recipients = list(recipients)
        if not recipients:
            raise ValueError('an encryptor needs at least one recipient')
        if len(recipients) > 255:
            raise ValueError('at most 255 recipients')
        if not rotate_after_s > 0 or not rotate_after_records > 0:
            raise ValueError('rotation bounds must be positive')
        self.keys = keys
        self.recipients = recipients
        self.pseudonym_key_id = pseudonym_key_id
        self.seal_headers = tuple(seal_headers or ())
        self.rotate_after_s = rotate_after_s
        self.rotate_after_records = min(int(rotate_after_records), MAX_RECORDS_PER_DATA_KEY)
        self.announce_every = max(1, int(announce_every))
        self.clock = clock
        self._current = None
        self._pseudonym = None
        self._lock = threading.Lock()
        self.data_keys_made = 0

    def rotate(self):
        """Forces a new data key for the next record (a rotation ahead of the bounds)."""
        with self._lock:
            self._current = None

    def _make_data_key(self):
        id_ = os.urandom(DATA_KEY_ID_BYTES)
        key = os.urandom(DATA_KEY_BYTES)
        wrapped = []
        for name in self.recipients:
            pub = self.keys.public_key(name)
            if pub is None:
                raise LookupError('no public key for recipient %s' % name)
            wrapped.append(wrap_data_key(pub.key, pub.key_id, id_, key))
        self.data_keys_made += 1
        return _DataKey(id_, key, tuple(wrapped), self.clock())

    def pseudonym(self) -> Optional[Pseudonym]:
        """The pseudonym secret records' keys are replaced under, or None."""
        if self.pseudonym_key_id is None:
            return None
        if self._pseudonym is None:
            s = self.keys.secret(self.pseudonym_key_id)
            if s is None:
                raise LookupError('no pseudonym secret %s' % self.pseudonym_key_id)
            self._pseudonym = Pseudonym(s.key_id, s.secret)
        return self._pseudonym

    def stored_key(self, key: Optional[bytes]) -> Optional[bytes]:
        """The key as it will be stored: its pseudonym with a pseudonym secret, else itself."""
        p = self.pseudonym()
        return key if p is None or key is None else pseudonym_of(p.secret, key)

    def encrypt(self, topic: str, record: E2eRecord) -> E2eRecord:
        """The stored (sealed) form of one record of topic."""
        pseudonym = self.pseudonym()
        with self._lock:
            dk = self._current
            if dk is None or dk.sealed >= self.rotate_after_records or self.clock() - dk.made_at >= self.rotate_after_s:
                dk = self._current = self._make_data_key()
            dk.sealed += 1
            since = dk.since_announced.get(topic)
            announce = since is None or since + 1 >= self.announce_every
            dk.since_announced[topic] = 0 if announce else since + 1
        return seal_record(record, topic, dk.id, dk.key, os.urandom(NONCE_BYTES), dk.wrapped if announce else (),
                           pseudonym, self.seal_headers)
