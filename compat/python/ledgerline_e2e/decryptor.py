"""The consumer side: finds the envelope, unwraps the data key with whichever recipient key the key reader
holds (cached by data key id, bounded in time and count), opens the record, and applies the failure action
when it cannot (Pulsar's ConsumerCryptoFailureAction):

  FAIL     (default) decrypt() raises E2eError; nothing is delivered and nothing after it skipped
  DISCARD  the record is dropped: DecryptResult(status='failed', record=None)
  CONSUME  the record is delivered as stored (ciphertext), DecryptResult(status='failed', record=stored)

A record without an envelope is plaintext, delivered as it is with status 'plaintext'.
"""
import threading
import time
from collections import OrderedDict
from typing import NamedTuple, Optional

from .errors import E2eError
from .record import E2eRecord, envelope_of, open_record

FAIL = 'FAIL'
DISCARD = 'DISCARD'
CONSUME = 'CONSUME'
FAILURE_ACTIONS = (FAIL, DISCARD, CONSUME)


class DecryptResult(NamedTuple):
    status: str  # 'decrypted', 'plaintext' or 'failed'
    record: Optional[E2eRecord]  # None when DISCARD dropped it
    error: Optional[E2eError] = None

    @property
    def reason(self):
        return None if self.error is None else self.error.reason


class RecordDecryptor:
    """Opens records. keys: a KeyReader; on_failure: FAIL, DISCARD or CONSUME; cache_ttl_s (default 600)
    and cache_max_keys (default 1000) bound the unwrapped data keys held; clock: seconds, for tests.
    Thread-safe."""

    def __init__(self, keys, on_failure: str = FAIL, cache_ttl_s: float = 600.0, cache_max_keys: int = 1000,
                 clock=time.monotonic):
        if on_failure not in FAILURE_ACTIONS:
            raise ValueError('the failure action is one of %s, not %r' % (', '.join(FAILURE_ACTIONS), on_failure))
        self.keys = keys
        self.on_failure = on_failure
        self.cache_ttl_s = cache_ttl_s
        self.cache_max_keys = max(1, int(cache_max_keys))
        self.clock = clock
        self._cache = OrderedDict()  # data key id -> (data key, expires), least recently used first
        self._lock = threading.Lock()
        self.unwraps = 0

    @property
    def cached_keys(self):
        return len(self._cache)

    def remember(self, data_key_id: bytes, data_key: bytes):
        """Holds a data key as if unwrapped (e.g. one a test vector names as already known)."""
        with self._lock:
            self._cache[bytes(data_key_id)] = (bytes(data_key), self.clock() + self.cache_ttl_s)
            self._cache.move_to_end(bytes(data_key_id))
            while len(self._cache) > self.cache_max_keys:
                self._cache.popitem(last=False)

    def _unwrap(self, env):
        last_error = None
        for w in env.wrapped_keys:
            try:
                k = self.keys.unwrap(w, env.data_key_id)
            except Exception as e:  # a key that does not open it; another recipient's may
                last_error = e
                continue
            if k is not None:
                return k
        if last_error is not None:
            raise E2eError('unwrap-failed', 'the data key %s does not unwrap: %s' % (env.data_key_id.hex(), last_error))
        raise E2eError('no-key', 'no private key for any recipient of data key %s (%s)'
                       % (env.data_key_id.hex(), ', '.join(w.key_id for w in env.wrapped_keys)))

    def _data_key(self, env):
        now = self.clock()
        with self._lock:
            hit = self._cache.get(env.data_key_id)
            if hit is not None:
                if hit[1] > now:
                    self._cache.move_to_end(env.data_key_id)
                    return hit[0]
                del self._cache[env.data_key_id]
        if not env.wrapped_keys:
            raise E2eError('unknown-data-key', 'the record references data key %s, announced by an earlier record '
                           'this consumer has not read (or no longer holds)' % env.data_key_id.hex())
        key = self._unwrap(env)
        self.unwraps += 1
        self.remember(env.data_key_id, key)
        return key

    def decrypt(self, topic: str, record: E2eRecord) -> DecryptResult:
        try:
            env = envelope_of(record)
            if env is None:
                return DecryptResult('plaintext', record)
            return DecryptResult('decrypted', open_record(record, topic, env, self._data_key(env)))
        except Exception as e:
            error = e if isinstance(e, E2eError) else E2eError('malformed', str(e))
            if self.on_failure == FAIL:
                if error is e:
                    raise
                raise error from e
            return DecryptResult('failed', record if self.on_failure == CONSUME else None, error)
