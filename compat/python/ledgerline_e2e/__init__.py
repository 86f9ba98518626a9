"""Ledgerline's end-to-end encryption envelope, version 1, for Python and confluent-kafka; the
specification is src/crypto/README.md, usage is README.md next to this file."""
from .decryptor import CONSUME, DISCARD, FAIL, DecryptResult, RecordDecryptor
from .encryptor import MAX_RECORDS_PER_DATA_KEY, RecordEncryptor
from .envelope import ENVELOPE_HEADER, Envelope, WrappedKey, decode_envelope, encode_envelope, encode_head
from .errors import E2eError, EnvelopeFormatError
from .keys import (CompositeKeyReader, EnvKeyReader, KeyReader, PemDirectoryKeyReader, PublicKey, Secret,
                   env_key_name, newest_version)
from .record import E2eRecord, Pseudonym, envelope_of, open_record, pseudonym_of, seal_record
from .wrap import load_private_key, load_public_key, unwrap_data_key, wrap_data_key

__all__ = [
    'CONSUME', 'DISCARD', 'FAIL', 'DecryptResult', 'RecordDecryptor', 'MAX_RECORDS_PER_DATA_KEY', 'RecordEncryptor',
    'ENVELOPE_HEADER', 'Envelope', 'WrappedKey', 'decode_envelope', 'encode_envelope', 'encode_head', 'E2eError',
    'EnvelopeFormatError', 'CompositeKeyReader', 'EnvKeyReader', 'KeyReader', 'PemDirectoryKeyReader', 'PublicKey',
    'Secret', 'env_key_name', 'newest_version', 'E2eRecord', 'Pseudonym', 'envelope_of', 'open_record',
    'pseudonym_of', 'seal_record', 'load_private_key', 'load_public_key', 'unwrap_data_key', 'wrap_data_key',
]
