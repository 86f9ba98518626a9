"""Key readers: where producers find recipients' public keys and pseudonym secrets, and where consumers
unwrap data keys (src/crypto/README.md, "Keys"). A KeyReader is also what a KMS implements: ``unwrap`` is
handed the wrapped bytes, so a private key may stay inside the KMS.

A name without a version (``orders``) resolves to its newest version (``orders.v3``), the unversioned name
counting as version 0; envelopes always name the exact id.

Key directory files: ``<id>.pub.pem`` (SPKI), ``<id>.pem`` (PKCS#8), ``<id>.secret`` (32 bytes, base64).
Environment: LEDGERLINE_E2E_PUBLIC_<ID>, LEDGERLINE_E2E_PRIVATE_<ID> (PEM text), LEDGERLINE_E2E_SECRET_<ID>
(base64), <ID> the key id upper-cased with every character outside [A-Z0-9] replaced by ``_``.
"""
import base64
import os
import re
import threading
import time
from typing import Iterable, NamedTuple, Optional

try:
    from typing import Protocol
except ImportError:  # Python < 3.8
    Protocol = object

from .envelope import WrappedKey
from .wrap import load_private_key, load_public_key, unwrap_data_key


class PublicKey(NamedTuple):
    key_id: str  # the exact id the name resolved to
    key: object  # an RSAPublicKey or X25519PublicKey


class Secret(NamedTuple):
    key_id: str
    secret: bytes


class KeyReader(Protocol):
    """What the encryptor and decryptor ask for keys; implement it to plug in a KMS."""

    def public_key(self, key_id: str) -> Optional[PublicKey]:
        """The public key of a recipient (a name resolves to its newest version); None if unknown."""

    def unwrap(self, wrapped: WrappedKey, data_key_id: bytes) -> Optional[bytes]:
        """The data key ``wrapped`` holds, or None when no private key for ``wrapped.key_id`` is held.
        Raises when unwrapping fails."""

    def secret(self, key_id: str) -> Optional[Secret]:
        """A pseudonym secret (a name resolves to its newest version); None if unknown."""


_VERSIONED = re.compile(r'^(.*)\.v(\d+)$', re.S)


def newest_version(ids: Iterable[str], name: str) -> Optional[str]:
    """The newest version of name among ids: name.v<N> with the largest N, the unversioned name counting
    as version 0; an id that is itself versioned resolves to itself. None when there is none."""
    best, best_version = None, -1
    for i in ids:
        m = _VERSIONED.match(i)
        version = 0 if i == name else int(m.group(2)) if m and m.group(1) == name else -1
        if version > best_version:
            best, best_version = i, version
    return best


def _b64(text) -> bytes:
    return base64.b64decode(text.strip(), validate=False)


class PemDirectoryKeyReader:
    """Reads a key directory; it is re-listed at most every refresh_s seconds (default 30) so rotations
    are seen. Thread-safe."""

    def __init__(self, directory: str, refresh_s: float = 30.0):
        self.directory = directory
        self.refresh_s = refresh_s
        self._listed = None
        self._listed_at = 0.0
        self._private = {}
        self._lock = threading.Lock()

    def _files(self):
        with self._lock:
            if self._listed is None or time.monotonic() - self._listed_at > self.refresh_s:
                self._listed = frozenset(os.listdir(self.directory))
                self._listed_at = time.monotonic()
            return self._listed

    def _resolve(self, name, suffix):
        ids = [f[:-len(suffix)] for f in self._files() if f.endswith(suffix)]
        return newest_version(ids, name)

    def _read(self, name):
        with open(os.path.join(self.directory, name), 'rb') as f:
            return f.read()

    def public_key(self, key_id):
        kid = self._resolve(key_id, '.pub.pem')
        return None if kid is None else PublicKey(kid, load_public_key(self._read(kid + '.pub.pem')))

    def unwrap(self, wrapped, data_key_id):
        key = self._private.get(wrapped.key_id)
        if key is None:
            if wrapped.key_id + '.pem' not in self._files() or '/' in wrapped.key_id or wrapped.key_id in ('.', '..'):
                return None
            key = load_private_key(self._read(wrapped.key_id + '.pem'))
            self._private[wrapped.key_id] = key
        return unwrap_data_key(key, wrapped, data_key_id)

    def secret(self, key_id):
        kid = self._resolve(key_id, '.secret')
        return None if kid is None else Secret(kid, _b64(self._read(kid + '.secret')))


def env_key_name(key_id: str) -> str:
    """The environment variable part of a key id: upper-cased, every character outside [A-Z0-9] replaced
    by '_' (one per UTF-16 code unit, as the TypeScript reader's regular expression does)."""
    out = []
    for c in key_id.upper():
        if 'A' <= c <= 'Z' or '0' <= c <= '9':
            out.append(c)
        else:
            out.append('__' if ord(c) > 0xFFFF else '_')
    return ''.join(out)


class EnvKeyReader:
    """Reads keys from environment variables (PEM text, base64 secrets); no versions, ids are exact."""

    def __init__(self, env=None):
        self.env = os.environ if env is None else env

    def public_key(self, key_id):
        pem = self.env.get('LEDGERLINE_E2E_PUBLIC_' + env_key_name(key_id))
        return None if pem is None else PublicKey(key_id, load_public_key(pem))

    def unwrap(self, wrapped, data_key_id):
        pem = self.env.get('LEDGERLINE_E2E_PRIVATE_' + env_key_name(wrapped.key_id))
        return None if pem is None else unwrap_data_key(load_private_key(pem), wrapped, data_key_id)

    def secret(self, key_id):
        b64 = self.env.get('LEDGERLINE_E2E_SECRET_' + env_key_name(key_id))
        return None if b64 is None else Secret(key_id, _b64(b64))


class CompositeKeyReader:
    """Asks each reader in turn; the first that knows a key answers."""

    def __init__(self, readers):
        self.readers = list(readers)

    def public_key(self, key_id):
        for r in self.readers:
            k = r.public_key(key_id)
            if k is not None:
                return k
        return None

    def unwrap(self, wrapped, data_key_id):
        for r in self.readers:
            k = r.unwrap(wrapped, data_key_id)
            if k is not None:
                return k
        return None

    def secret(self, key_id):
        for r in self.readers:
            s = r.secret(key_id)
            if s is not None:
                return s
        return None
