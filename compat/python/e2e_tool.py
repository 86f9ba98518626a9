"""The e2e interop tool of the Python library (/compat/python/ledgerline_e2e), as every language ships it:

  e2e_tool.py vectors <dir>
  e2e_tool.py produce --bootstrap HOST:PORT --topic T --keys DIR --recipients ID[,ID...] --count N --tag TAG
                      [--pseudonym ID] [--seal-headers H[,H...]] [--rotate-records M] [--plaintext]
  e2e_tool.py consume --bootstrap HOST:PORT --topic T --keys DIR --count N [--on-failure FAIL|DISCARD|CONSUME]
                      [--timeout-ms 60000]

Arguments, records and output are the same in every language (the cross-language test runs them all);
stdout carries only the JSON lines (or the vector lines), logs go to stderr. Producing goes through
E2eSerializingProducer (confluent-kafka's SerializingProducer), consuming through E2eDeserializingConsumer.
"""
import argparse
import json
import os
import sys
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from ledgerline_e2e import (E2eError, E2eRecord, PemDirectoryKeyReader, RecordDecryptor, RecordEncryptor,  # noqa: E402
                            WrappedKey, envelope_of, load_private_key, load_public_key, open_record, seal_record,
                            unwrap_data_key, wrap_data_key)
from ledgerline_e2e.envelope import WRAP_RSA_OAEP_256, WRAP_X25519_HKDF_SHA256_A256GCM  # noqa: E402
from ledgerline_e2e.record import Pseudonym  # noqa: E402


def log(*parts):
    print(*parts, file=sys.stderr, flush=True)


def out(obj):
    sys.stdout.write(json.dumps(obj, separators=(',', ':')) + '\n')
    sys.stdout.flush()


def hexof(b):
    return None if b is None else bytes(b).hex()


# ---------------------------------------------------------------------------------------------- vectors
def _buf(h):
    return None if h is None else bytes.fromhex(h)


def _record(j):
    return E2eRecord(_buf(j['key']), _buf(j['value']), tuple((h['key'], _buf(h['value'])) for h in j['headers']))


def _json_record(r):
    return {'key': hexof(r.key), 'value': hexof(r.value), 'headers': [{'key': n, 'value': hexof(v)} for n, v in r.headers]}


class _VectorKeys:
    """A key reader holding the private keys a vector names."""

    def __init__(self, recipients):
        self.keys = {r['keyId']: load_private_key(r['privateKeyPem']) for r in recipients}

    def public_key(self, key_id):
        return None

    def secret(self, key_id):
        return None

    def unwrap(self, w, data_key_id):
        k = self.keys.get(w.key_id)
        return None if k is None else unwrap_data_key(k, w, data_key_id)


def _check_seal(v):
    dkid, dk = _buf(v['dataKeyId']), _buf(v['dataKey'])
    wrapped = []
    for r in v['recipients']:
        algorithm = WRAP_RSA_OAEP_256 if r['type'] == 'rsa' else WRAP_X25519_HKDF_SHA256_A256GCM
        if r['type'] == 'x25519':
            w = wrap_data_key(load_public_key(r['publicKeyPem']), r['keyId'], dkid, dk,
                              ephemeral=load_private_key(r['ephemeralPrivateKeyPem']), nonce=_buf(r['wrapNonce']))
            if w.wrapped.hex() != r['wrapped']:
                return 'the X25519 wrap for %s is %s, expected %s' % (r['keyId'], w.wrapped.hex(), r['wrapped'])
        w = WrappedKey(r['keyId'], algorithm, _buf(r['wrapped']))
        if unwrap_data_key(load_private_key(r['privateKeyPem']), w, dkid) != dk:
            return '%s unwraps to another data key' % r['keyId']
        wrapped.append(w)
    p = v['pseudonym']
    sealed = seal_record(_record(v['input']), v['topic'], dkid, dk, _buf(v['nonceBase']), [] if v['reference'] else wrapped,
                         None if p is None else Pseudonym(p['keyId'], _buf(p['secret'])), v['sealHeaders'])
    if _json_record(sealed) != v['output']:
        return 'sealing gives %s' % json.dumps(_json_record(sealed))
    stored = _record(v['output'])
    opened = open_record(stored, v['topic'], envelope_of(stored), dk)
    if opened != _record(v['input']):
        return 'opening with the data key gives %s' % json.dumps(_json_record(opened))
    if not v['reference']:
        result = RecordDecryptor(_VectorKeys(v['recipients'])).decrypt(v['topic'], stored)
        if result.status != 'decrypted' or result.record != _record(v['input']):
            return 'the decryptor gives %s %s' % (result.status, json.dumps(_json_record(result.record)))
    return None


def _check_open(v):
    d = RecordDecryptor(_VectorKeys(v['recipients']))
    for k in v['knownDataKeys']:
        d.remember(_buf(k['dataKeyId']), _buf(k['dataKey']))
    try:
        result = d.decrypt(v['topic'], _record(v['record']))
    except E2eError as e:
        if v['error'] is None:
            return 'fails with %s (%s)' % (e.reason, e)
        if e.reason != v['error']:
            return 'fails with %s (%s), expected %s' % (e.reason, e, v['error'])
        return None
    if v['error'] is not None:
        return 'opens (%s), expected %s' % (result.status, v['error'])
    if result.record != _record(v['expect']):
        return 'gives %s' % json.dumps(_json_record(result.record))
    return None


def cmd_vectors(args):
    files = sorted(f for f in os.listdir(args.dir) if f.endswith('.json') and (f.startswith('seal-') or f.startswith('open-')))
    if not files:
        print('FAIL %s: no vectors' % args.dir)
        return 1
    failed = 0
    for f in files:
        try:
            with open(os.path.join(args.dir, f), encoding='utf-8') as fh:
                v = json.load(fh)
            why = _check_seal(v) if v['kind'] == 'seal' else _check_open(v)
        except Exception as e:  # a vector that breaks the implementation is a failed vector, not a crash
            why = '%s: %s' % (type(e).__name__, e)
        if why is None:
            print('ok %s' % f)
        else:
            failed += 1
            print('FAIL %s: %s' % (f, why))
    sys.stdout.flush()
    return 1 if failed else 0


# ---------------------------------------------------------------------------------------------- produce
def cmd_produce(args):
    from confluent_kafka import SerializingProducer
    from confluent_kafka.serialization import StringSerializer
    from ledgerline_e2e.confluent import E2eSerializingProducer

    conf = {'bootstrap.servers': args.bootstrap, 'acks': 'all', 'message.timeout.ms': 30000,
            'key.serializer': StringSerializer('utf_8'), 'value.serializer': StringSerializer('utf_8')}
    if args.plaintext:
        producer = SerializingProducer(conf)
    else:
        keys = PemDirectoryKeyReader(args.keys)
        options = {}
        if args.rotate_records is not None:
            options['rotate_after_records'] = args.rotate_records
        encryptor = RecordEncryptor(keys, [r for r in args.recipients.split(',') if r], pseudonym_key_id=args.pseudonym,
                                    seal_headers=[h for h in (args.seal_headers or '').split(',') if h], **options)
        producer = E2eSerializingProducer(conf, encryptor)
    errors = []
    acked = [0]

    def delivered(err, msg):
        if err is not None:
            errors.append(err.str())
        else:
            acked[0] += 1

    try:
        for i in range(args.count):
            headers = [('n', str(i).encode()), ('h-secret', ('s%d' % i).encode())]
            while True:
                try:
                    producer.produce(args.topic, key='k%d' % (i % 7), value='%s:%d:%s' % (args.tag, i, 'x' * (i % 13)),
                                     headers=headers, on_delivery=delivered)
                    break
                except BufferError:
                    producer.poll(0.1)
            producer.poll(0)
        remaining = producer.flush(60)
    except Exception as e:
        out({'error': str(e)})
        return 2
    if errors:
        out({'error': errors[0]})
        return 2
    if remaining or acked[0] != args.count:
        out({'error': '%d of %d records not acknowledged' % (args.count - acked[0], args.count)})
        return 2
    out({'produced': args.count})
    return 0


# ---------------------------------------------------------------------------------------------- consume
def cmd_consume(args):
    from confluent_kafka import OFFSET_BEGINNING, TopicPartition
    from ledgerline_e2e.confluent import E2eConsumeError, E2eDeserializingConsumer

    decryptor = RecordDecryptor(PemDirectoryKeyReader(args.keys), on_failure=args.on_failure)
    consumer = E2eDeserializingConsumer({'bootstrap.servers': args.bootstrap, 'group.id': 'e2e-tool-' + uuid.uuid4().hex,
                                         'enable.auto.commit': False, 'auto.offset.reset': 'earliest',
                                         'enable.partition.eof': False}, decryptor)
    deadline = time.monotonic() + args.timeout_ms / 1000.0
    delivered = 0
    try:
        partitions = []
        while not partitions:
            md = consumer.list_topics(topic=args.topic, timeout=max(0.1, min(5.0, deadline - time.monotonic())))
            t = md.topics.get(args.topic)
            if t is not None and t.error is None and t.partitions:
                partitions = sorted(t.partitions)
                break
            if time.monotonic() >= deadline:
                out({'timeout': True, 'delivered': 0})
                return 4
            time.sleep(0.2)
        consumer.assign([TopicPartition(args.topic, p, OFFSET_BEGINNING) for p in partitions])
        while delivered < args.count:
            left = deadline - time.monotonic()
            if left <= 0:
                out({'timeout': True, 'delivered': delivered})
                return 4
            try:
                msg = consumer.poll(min(left, 1.0))
            except E2eConsumeError as e:
                m = e.kafka_message
                out({'failed': e.reason, 'partition': m.partition(), 'offset': m.offset()})
                return 3
            if msg is None:
                continue
            s = consumer.last_status
            out({'partition': msg.partition(), 'offset': msg.offset(), 'key': hexof(msg.key()), 'value': hexof(msg.value()),
                 'headers': [[n, hexof(v)] for n, v in (msg.headers() or [])], 'status': s.status, 'reason': s.reason})
            delivered += 1
        return 0
    finally:
        consumer.close()


def main(argv):
    ap = argparse.ArgumentParser(prog='e2e_tool.py', description=__doc__.split('\n\n')[0])
    sub = ap.add_subparsers(dest='command', required=True)
    v = sub.add_parser('vectors')
    v.add_argument('dir')
    p = sub.add_parser('produce')
    c = sub.add_parser('consume')
    for s in (p, c):
        s.add_argument('--bootstrap', required=True)
        s.add_argument('--topic', required=True)
        s.add_argument('--keys', required=True)
        s.add_argument('--count', required=True, type=int)
    p.add_argument('--recipients', required=True)
    p.add_argument('--tag', required=True)
    p.add_argument('--pseudonym')
    p.add_argument('--seal-headers')
    p.add_argument('--rotate-records', type=int)
    p.add_argument('--plaintext', action='store_true')
    c.add_argument('--on-failure', default='FAIL', choices=['FAIL', 'DISCARD', 'CONSUME'])
    c.add_argument('--timeout-ms', type=int, default=60000)
    args = ap.parse_args(argv)
    return {'vectors': cmd_vectors, 'produce': cmd_produce, 'consume': cmd_consume}[args.command](args)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
