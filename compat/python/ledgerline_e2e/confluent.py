"""confluent-kafka integration (checked against confluent-kafka 2.16.1's serializing_producer.py and
deserializing_consumer.py).

Producing. ``SerializingProducer.produce`` makes ONE SerializationContext, calls the key serializer with
field KEY, then the value serializer with field VALUE on the same object, whose ``headers`` is the very
object the application passed, and then produces ``headers`` as they are. So:

- E2eSerializers(encryptor, key_serializer, value_serializer) gives a cooperating pair. The key
  serializer runs the application's own key serializer, leaves the key bytes on the context object and
  answers the key as stored (its pseudonym, with a pseudonym secret); the value serializer runs the
  application's value serializer, seals key, value and headers, rewrites the context's headers IN PLACE
  (sealed headers out, the ``ledgerline.e2e`` envelope appended) and answers the sealed value.
- With headers=None (produce's default) there is nothing to rewrite, and a reused headers list would be
  rewritten twice: E2eSerializingProducer, a small SerializingProducer subclass, wraps the configured
  serializers and always hands a fresh list to them. With a plain SerializingProducer the application
  must pass a new list (or dict) of headers on every produce.

Consuming. ``DeserializingConsumer.poll`` runs the deserializers on each message without the other part of
the record, but the AAD needs the key as stored and the envelope in the headers: E2eDeserializingConsumer
decrypts the raw message (key, value, headers) in poll() before the application's own deserializers run,
restores key (pseudonyms), value and headers on the message (set_key/set_value/set_headers), and applies
the decryptor's failure action.
"""
import time

from confluent_kafka import DeserializingConsumer, KafkaError, SerializingProducer, TopicPartition
from confluent_kafka.cimpl import Consumer as _ConsumerImpl
from confluent_kafka.error import ConsumeError
from confluent_kafka.serialization import SerializationError

from .decryptor import RecordDecryptor
from .errors import E2eError
from .record import E2eRecord

_KEY_ATTR = '_ledgerline_e2e_key'
FAILED_HEADER = 'ledgerline.e2e.failed'


def _as_bytes(obj, what):
    if obj is None or isinstance(obj, bytes):
        return obj
    if isinstance(obj, (bytearray, memoryview)):
        return bytes(obj)
    if isinstance(obj, str):
        return obj.encode('utf-8')
    raise SerializationError('the %s must be bytes or str (or configure a serializer for it), not %s'
                             % (what, type(obj).__name__))


def _header_list(headers):
    """confluent's headers (a list of (name, value) tuples, or a dict) as a list of (str, bytes|None)."""
    items = headers.items() if isinstance(headers, dict) else headers
    out = []
    for h in items:
        name, value = h
        out.append((name, _as_bytes(value, 'header %s' % name)))
    return out


class E2eSerializers:
    """The key and value serializers of an encrypting SerializingProducer; both must be configured.

    encryptor: a RecordEncryptor; key_serializer / value_serializer: the application's own (callables of
    (obj, SerializationContext)), or None for bytes and str (UTF-8) as they are.
    """

    def __init__(self, encryptor, key_serializer=None, value_serializer=None):
        self.encryptor = encryptor
        self.inner_key = key_serializer
        self.inner_value = value_serializer

    def key_serializer(self, obj, ctx):
        key = self.inner_key(obj, ctx) if self.inner_key is not None else obj
        key = _as_bytes(key, 'key')
        setattr(ctx, _KEY_ATTR, key)
        return self.encryptor.stored_key(key)

    def value_serializer(self, obj, ctx):
        value = self.inner_value(obj, ctx) if self.inner_value is not None else obj
        value = _as_bytes(value, 'value')
        if not hasattr(ctx, _KEY_ATTR):
            raise SerializationError('the e2e value serializer needs the e2e key serializer of the same E2eSerializers '
                                     'as the key serializer (it passes the key it needs for the AAD)')
        key = getattr(ctx, _KEY_ATTR)
        delattr(ctx, _KEY_ATTR)
        headers = ctx.headers
        if headers is None:
            raise SerializationError('an encrypted record needs a headers list to carry its envelope: pass headers=[] '
                                     'to produce, or use E2eSerializingProducer, which does')
        if not isinstance(headers, (list, dict)):
            raise SerializationError('the headers of an encrypted record must be a list or a dict (rewritten in place), '
                                     'not %s' % type(headers).__name__)
        sealed = self.encryptor.encrypt(ctx.topic, E2eRecord(key, value, tuple(_header_list(headers))))
        if isinstance(headers, dict):
            headers.clear()
            headers.update(sealed.headers)
        else:
            headers[:] = list(sealed.headers)
        return sealed.value


class E2eSerializingProducer(SerializingProducer):
    """A SerializingProducer that encrypts: E2eSerializingProducer(conf, encryptor). The serializers
    configured in conf (``key.serializer`` / ``value.serializer`` or their builders) become the inner ones
    of an E2eSerializers pair, and every produce hands the serializers a fresh headers list (from the
    list, dict or None the application passed), which carries the envelope to the broker."""

    def __init__(self, conf, encryptor):
        super().__init__(conf)
        # SerializingProducer keeps the serializers it built from conf here (confluent-kafka 2.x).
        if not hasattr(self, '_key_serializer') or not hasattr(self, '_value_serializer'):
            self.close()
            raise RuntimeError('this confluent-kafka SerializingProducer keeps its serializers elsewhere; '
                               'use E2eSerializers with a SerializingProducer instead')
        self.e2e = E2eSerializers(encryptor, self._key_serializer, self._value_serializer)
        self._key_serializer = self.e2e.key_serializer
        self._value_serializer = self.e2e.value_serializer

    def produce(self, topic, key=None, value=None, partition=-1, on_delivery=None, timestamp=0, headers=None):
        fresh = [] if headers is None else _header_list(headers)
        super().produce(topic, key=key, value=value, partition=partition, on_delivery=on_delivery,
                        timestamp=timestamp, headers=fresh)


class E2eConsumeError(ConsumeError):
    """Raised by E2eDeserializingConsumer.poll() under FAIL: ``reason`` is the E2eError's,
    ``kafka_message`` the message as stored; the consumer's position is set back to it, so nothing after
    it is skipped (the next poll meets the same record again)."""

    def __init__(self, error, kafka_message):
        super().__init__(KafkaError(KafkaError._VALUE_DESERIALIZATION, str(error)), exception=error,
                         kafka_message=kafka_message)
        self.e2e_error = error
        self.reason = error.reason


class E2eStatus:
    """What E2eDeserializingConsumer did with the message poll() returned last."""
    __slots__ = ('status', 'error')

    def __init__(self, status, error=None):
        self.status = status  # 'decrypted', 'plaintext' or 'failed' (CONSUME)
        self.error = error

    @property
    def reason(self):
        return None if self.error is None else self.error.reason

    def __repr__(self):
        return 'E2eStatus(%r, %r)' % (self.status, self.reason)


class E2eDeserializingConsumer(DeserializingConsumer):
    """A DeserializingConsumer that decrypts: E2eDeserializingConsumer(conf, decryptor), decryptor a
    RecordDecryptor (its on_failure is the failure action), or a key reader (then FAIL).

    poll() decrypts each message before the configured deserializers run. Under DISCARD a record that does
    not decrypt is skipped and poll() goes on to the next one within its timeout (None when none comes);
    under CONSUME it is returned as stored, the deserializers NOT run on its ciphertext, with
    ``last_status.status == 'failed'`` and, if failed_header is given (e.g. FAILED_HEADER), a header of
    that name carrying the reason appended; under FAIL poll() raises E2eConsumeError. ``last_status`` is
    always the status of the message poll() returned last.
    """

    def __init__(self, conf, decryptor, failed_header=None):
        if not isinstance(decryptor, RecordDecryptor):
            decryptor = RecordDecryptor(decryptor)
        super().__init__(conf)
        # DeserializingConsumer runs the deserializers of a polled message here (confluent-kafka 2.x).
        if not callable(getattr(self, '_deserialize', None)):
            self.close()
            raise RuntimeError('this confluent-kafka DeserializingConsumer has no _deserialize(msg); '
                               'decrypt with RecordDecryptor before deserializing instead')
        self.decryptor = decryptor
        self.failed_header = failed_header
        self.last_status = None

    def poll(self, timeout=-1):
        deadline = None if timeout is None or timeout < 0 else time.monotonic() + timeout
        while True:
            remaining = -1 if deadline is None else max(0.0, deadline - time.monotonic())
            msg = _ConsumerImpl.poll(self, remaining)
            self.last_status = None
            if msg is None:
                return None
            if msg.error() is not None:
                raise ConsumeError(msg.error(), kafka_message=msg)
            status = self._decrypt(msg)
            if status is None:  # DISCARD
                if deadline is not None and time.monotonic() >= deadline:
                    return None
                continue
            self.last_status = status
            if status.status == 'failed':
                return msg
            return self._deserialize(msg)

    def _decrypt(self, msg):
        headers = msg.headers() or []
        stored = E2eRecord(msg.key(), msg.value(), tuple((n, v) for n, v in headers))
        try:
            result = self.decryptor.decrypt(msg.topic(), stored)
        except E2eError as e:
            try:
                self.seek(TopicPartition(msg.topic(), msg.partition(), msg.offset()))
            except Exception:  # not assigned any more: nothing to keep the position of
                pass
            raise E2eConsumeError(e, msg) from e
        if result.status == 'plaintext':
            return E2eStatus('plaintext')
        if result.status == 'failed':
            if result.record is None:
                return None
            if self.failed_header is not None:
                msg.set_headers(list(headers) + [(self.failed_header, result.error.reason.encode('utf-8'))])
            return E2eStatus('failed', result.error)
        r = result.record
        msg.set_key(r.key)
        msg.set_value(r.value)
        msg.set_headers(list(r.headers))
        return E2eStatus('decrypted')
