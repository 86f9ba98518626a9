"""Checks of ledgerline_e2e.confluent beyond the e2e tool's contract, through a real broker:

  e2e_api_check.py BOOTSTRAP ALL_KEYS_DIR BILLING_ONLY_DIR NO_KEYS_DIR

(ALL_KEYS_DIR holds the X25519 recipient `billing` and the pseudonym secret `orders-keys`.) Headers given as
None, a dict and a reused list; a tombstone and a null key under pseudonyms; a plain SerializingProducer
with E2eSerializers, and its refusal of headers=None; FAIL keeping the position at the failed record;
DISCARD skipping to the next record; CONSUME with the failed-reason header. Prints `ok` and exits 0, or
raises. Run by test/integration/e2e-python.test.ts.
"""
import os
import sys
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from confluent_kafka import OFFSET_BEGINNING, SerializingProducer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402
from confluent_kafka.serialization import StringDeserializer, StringSerializer  # noqa: E402

from ledgerline_e2e import PemDirectoryKeyReader, RecordDecryptor, RecordEncryptor  # noqa: E402
from ledgerline_e2e.confluent import (FAILED_HEADER, E2eConsumeError, E2eDeserializingConsumer,  # noqa: E402
                                      E2eSerializers, E2eSerializingProducer)


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def main(bootstrap, all_keys, billing_keys, no_keys):
    topic = 'api-' + uuid.uuid4().hex[:8]
    admin = AdminClient({'bootstrap.servers': bootstrap})
    admin.create_topics([NewTopic(topic, 3, 1)])[topic].result(20)
    enc = RecordEncryptor(PemDirectoryKeyReader(all_keys), ['billing'], pseudonym_key_id='orders-keys', seal_headers=['s'])
    p = E2eSerializingProducer({'bootstrap.servers': bootstrap, 'key.serializer': StringSerializer(),
                                'value.serializer': StringSerializer()}, enc)
    reused = [('c', b'1'), ('s', 'secret')]
    p.produce(topic, key='a', value='none-headers')
    p.produce(topic, key='a', value='dict', headers={'c': 'x', 's': b'y'})
    p.produce(topic, key='b', value='list', headers=reused)
    p.produce(topic, key='b', value='list-again', headers=reused)
    p.produce(topic, key='a', value=None)  # a tombstone under a pseudonym
    p.produce(topic, key=None, value='null-key')
    check(reused == [('c', b'1'), ('s', 'secret')], 'E2eSerializingProducer changed the application headers: %r' % reused)
    pair = E2eSerializers(enc, StringSerializer(), StringSerializer())
    sp = SerializingProducer({'bootstrap.servers': bootstrap, 'key.serializer': pair.key_serializer,
                              'value.serializer': pair.value_serializer})
    h = [('s', b'z')]
    sp.produce(topic, key='c', value='plain-producer', headers=h)
    check([n for n, _ in h] == ['ledgerline.e2e'], 'the headers list is rewritten in place: %r' % h)
    try:
        sp.produce(topic, key='c', value='no headers')
        raise AssertionError('a plain SerializingProducer with headers=None must refuse')
    except Exception as e:
        check('headers' in str(e), 'the refusal names the headers: %s' % e)
    raw = SerializingProducer({'bootstrap.servers': bootstrap})
    raw.produce(topic, key=b'p', value=b'plaintext', partition=0)
    for x in (p, sp, raw):
        check(x.flush(20) == 0, 'not every record acknowledged')
    total = 8

    def consumer(keys, action, failed_header=None):
        c = E2eDeserializingConsumer({'bootstrap.servers': bootstrap, 'group.id': 'api-' + uuid.uuid4().hex,
                                      'enable.auto.commit': False, 'key.deserializer': StringDeserializer(),
                                      'value.deserializer': StringDeserializer()},
                                     RecordDecryptor(PemDirectoryKeyReader(keys), on_failure=action), failed_header)
        c.assign([TopicPartition(topic, i, OFFSET_BEGINNING) for i in range(3)])
        return c

    c = consumer(billing_keys, 'FAIL')
    got = {}
    while len(got) < total:
        m = c.poll(10)
        check(m is not None, 'records missing: %r' % got)
        got[m.value()] = (m.key(), m.headers(), c.last_status.status, m.partition())
    c.close()
    check(got['none-headers'][:3] == ('a', [], 'decrypted'), repr(got['none-headers']))
    check(got['dict'][:3] == ('a', [('c', b'x'), ('s', b'y')], 'decrypted'), repr(got['dict']))
    check(got['list'][1] == got['list-again'][1] == [('c', b'1'), ('s', b'secret')], repr(got['list']))
    check(got[None][:3] == ('a', [], 'decrypted'), 'the tombstone: %r' % (got[None],))
    check(got['null-key'][0] is None, repr(got['null-key']))
    check(got['plain-producer'][:3] == ('c', [('s', b'z')], 'decrypted'), repr(got['plain-producer']))
    check(got['plaintext'][2] == 'plaintext', repr(got['plaintext']))
    check(got['none-headers'][3] == got['dict'][3] == got[None][3], 'equal keys, one partition (pseudonyms)')

    c = consumer(no_keys, 'FAIL')
    seen = []
    while len(seen) < 6:
        try:
            if c.poll(10) is None:
                break
        except E2eConsumeError as e:
            seen.append((e.reason, e.kafka_message.partition(), e.kafka_message.offset()))
    c.close()
    # Each partition stays at its first failed record (offset 0 here): polls may alternate between
    # partitions, but none moves past its record, and at least one is met more than once.
    first = {}
    for reason, partition, offset in seen:
        first.setdefault(partition, offset)
    check(len(seen) == 6 and all(x[0] == 'no-key' and x[2] == first[x[1]] for x in seen) and len(set(seen)) < len(seen),
          'FAIL meets the failed record again: %r' % seen)

    c = consumer(no_keys, 'DISCARD')
    values = []
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        m = c.poll(1)
        if m is not None:
            values.append(m.value())
    c.close()
    check(values == ['plaintext'], 'DISCARD delivers the plaintext record only: %r' % values)

    c = consumer(no_keys, 'CONSUME', FAILED_HEADER)
    counts = {}
    while sum(counts.values()) < total:
        m = c.poll(10)
        check(m is not None, 'CONSUME: records missing: %r' % counts)
        s = c.last_status.status
        counts[s] = counts.get(s, 0) + 1
        if s == 'failed':
            check(m.headers()[-1] == (FAILED_HEADER, b'no-key') and c.last_status.reason == 'no-key', repr(m.headers()))
            check(m.value() is None or isinstance(m.value(), bytes), 'CONSUME does not deserialize ciphertext')
    c.close()
    check(counts == {'failed': 7, 'plaintext': 1}, 'CONSUME: %r' % counts)
    print('ok')


if __name__ == '__main__':
    main(*sys.argv[1:5])
