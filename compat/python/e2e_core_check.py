"""Checks of the ledgerline_e2e core beyond the test vectors, with no broker: every refusal of the envelope
format (src/crypto/README.md, "The envelope header"), key resolution by version, the environment key
reader, the encryptor's rotation by count and age and its announcements, and the decryptor's cache bounds.

  e2e_core_check.py

Prints `ok` and exits 0, or raises. Run by test/integration/e2e-python.test.ts.
"""
import os
import struct
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from cryptography.hazmat.primitives import serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import rsa, x25519  # noqa: E402

from ledgerline_e2e import (ENVELOPE_HEADER, E2eError, E2eRecord, EnvKeyReader, PemDirectoryKeyReader,  # noqa: E402
                            RecordDecryptor, RecordEncryptor, WrappedKey, decode_envelope, encode_envelope,
                            encode_head, env_key_name, envelope_of, newest_version)
from ledgerline_e2e.errors import EnvelopeFormatError  # noqa: E402


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def refused(value, what):
    try:
        decode_envelope(value)
    except EnvelopeFormatError:
        return
    raise AssertionError('accepted: ' + what)


def envelope_refusals():
    dkid, nonce = bytes(range(16)), bytes(12)
    head = encode_head(dkid, nonce, [WrappedKey('k', 2, b'w' * 92)], 'p', False)
    good = encode_envelope(head, b's' * 16, None)
    check(decode_envelope(good).pseudonym_key_id == 'p', 'a good envelope parses')
    fixed = bytes([1, 1, 0]) + dkid + nonce
    refused(bytes([2]) + good[1:], 'another version')
    refused(good[:1] + bytes([2]) + good[2:], 'another cipher')
    refused(bytes([1, 1, 0x08]) + dkid + nonce, 'an unknown flag bit')
    refused(bytes([1, 1, 0x01]) + dkid + nonce + bytes([0]), 'KEYS with no recipient')
    refused(bytes([1, 1, 0x01]) + dkid + nonce + bytes([1, 0]), 'an empty recipient key id')
    refused(bytes([1, 1, 0x01]) + dkid + nonce + bytes([1, 1]) + b'k' + bytes([2]) + struct.pack('>H', 0), 'an empty wrapped key')
    refused(bytes([1, 1, 0x01]) + dkid + nonce + bytes([1, 1]) + b'k' + bytes([3]) + struct.pack('>H', 1) + b'w', 'an unknown wrap')
    refused(bytes([1, 1, 0x01]) + dkid + nonce + bytes([1, 1]) + b'k' + bytes([2]) + struct.pack('>H', 9) + b'w', 'a wrapped key past the end')
    refused(bytes([1, 1, 0x02]) + dkid + nonce + bytes([0]), 'an empty pseudonym key id')
    refused(bytes([1, 1, 0x04]) + dkid + nonce + struct.pack('>I', 15) + b's' * 15, 'sealed headers shorter than a tag')
    refused(bytes([1, 1, 0x04]) + dkid + nonce + struct.pack('>I', 40) + b's' * 16, 'sealed headers past the end')
    refused(fixed + b'\x00', 'bytes after the last field')
    refused(fixed[:30], 'a truncated fixed head')
    for i in range(len(good)):
        refused(good[:i], 'the envelope cut at byte %d' % i)
    for headers, what in (([(ENVELOPE_HEADER, None)], 'a null envelope'), ([(ENVELOPE_HEADER, good), (ENVELOPE_HEADER, good)], 'two envelopes')):
        try:
            envelope_of(E2eRecord(b'k', b'v', tuple(headers)))
            raise AssertionError('accepted: ' + what)
        except E2eError as e:
            check(e.reason == 'malformed', what)
    check(envelope_of(E2eRecord(b'k', b'v', (('x', None),))) is None, 'no envelope: plaintext')


def pem(key, private):
    if private:
        return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def keys_and_rotation():
    check(newest_version(['a', 'a.v2', 'a.v10', 'ab.v11', 'b'], 'a') == 'a.v10', 'the newest version')
    check(newest_version(['a.v1'], 'a.v1') == 'a.v1' and newest_version(['b'], 'a') is None, 'exact ids')
    check(env_key_name('orders.v2-eu') == 'ORDERS_V2_EU', env_key_name('orders.v2-eu'))
    d = tempfile.mkdtemp()
    x = x25519.X25519PrivateKey.generate()
    r = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    for name, key in (('svc', x), ('svc.v3', r)):
        for suffix, private in (('.pem', True), ('.pub.pem', False)):
            with open(os.path.join(d, name + suffix), 'wb') as f:
                f.write(pem(key, private))
    reader = PemDirectoryKeyReader(d)
    check(reader.public_key('svc').key_id == 'svc.v3', 'svc resolves to svc.v3')
    env = EnvKeyReader({'LEDGERLINE_E2E_PUBLIC_SVC': pem(x, False).decode(), 'LEDGERLINE_E2E_PRIVATE_SVC': pem(x, True).decode()})
    now = [0.0]
    enc = RecordEncryptor(env, ['svc'], rotate_after_records=2, rotate_after_s=10, announce_every=3, clock=lambda: now[0])
    envs = [envelope_of(enc.encrypt('t', E2eRecord(b'k', b'v%d' % i))) for i in range(4)]
    check(len({e.data_key_id for e in envs}) == 2, 'rotation every 2 records')
    now[0] = 11
    check(envelope_of(enc.encrypt('t', E2eRecord(b'k', b'v'))).data_key_id not in {e.data_key_id for e in envs}, 'rotation by age')
    enc = RecordEncryptor(env, ['svc'], announce_every=3)
    envs = [envelope_of(enc.encrypt('t', E2eRecord(b'k', b'v'))) for i in range(6)]
    check([bool(e.wrapped_keys) for e in envs] == [True, False, False, True, False, False], 'announce every 3rd record')
    dec = RecordDecryptor(env, on_failure='CONSUME', cache_max_keys=1)
    recs = [enc.encrypt('t', E2eRecord(b'k', b'v%d' % i)) for i in range(3)]
    check([dec.decrypt('t', rec).status for rec in recs] == ['decrypted'] * 3, 'references open once announced')
    fresh = RecordDecryptor(env, on_failure='DISCARD')
    check(fresh.decrypt('t', recs[1]).status == 'failed' and fresh.decrypt('t', recs[1]).error.reason == 'unknown-data-key', 'unknown-data-key')
    check(fresh.decrypt('t', recs[0]).status == 'decrypted' and fresh.decrypt('t', recs[1]).status == 'decrypted', 'after the announcement')
    two = RecordEncryptor(env, ['svc'])
    for i in range(3):
        dec.decrypt('t', two.encrypt('t', E2eRecord(b'k', b'v')))
        two.rotate()
    check(dec.cached_keys == 1, 'at most cache_max_keys data keys held')
    now[0] = 0
    timed = RecordDecryptor(env, cache_ttl_s=5, clock=lambda: now[0])
    rec = RecordEncryptor(env, ['svc']).encrypt('t', E2eRecord(b'k', b'v'))
    timed.decrypt('t', rec)
    timed.decrypt('t', rec)
    now[0] = 6
    timed.decrypt('t', rec)
    check(timed.unwraps == 2, 'a cached data key expires after cache_ttl_s: %d unwraps' % timed.unwraps)
    # A wrapped key of the wrong kind for the private key held: unwrap-failed.
    wrong = EnvKeyReader({'LEDGERLINE_E2E_PRIVATE_SVC': pem(r, True).decode()})
    try:
        RecordDecryptor(wrong).decrypt('t', rec)
        raise AssertionError('an RSA key opened an X25519 wrap')
    except E2eError as e:
        check(e.reason == 'unwrap-failed', e.reason)
    try:
        RecordEncryptor(env, ['svc'], rotate_after_records=0)
        raise AssertionError('a rotation bound of 0 accepted')
    except ValueError:
        pass
    check(RecordEncryptor(env, ['svc'], rotate_after_records=2 ** 40).rotate_after_records == 2 ** 30, 'capped at 2^30')


if __name__ == '__main__':
    envelope_refusals()
    keys_and_rotation()
    print('ok')
