"""Produce and consume over an SSL or SASL_SSL listener with a Python client, for
test/integration/security-clients.test.ts.

    security_check.py <confluent-kafka|kafka-python> --bootstrap HOST:PORT --topic T --count N --group G
        --security-protocol SSL|SASL_SSL --ca-location CA.pem
        [--certificate-location CLIENT.crt --key-location CLIENT.key]
        [--sasl-mechanism SCRAM-SHA-512 --username U --password P]

Produces N records (key "k<i>", value "<topic>:<i>") with acks=all and waits for every acknowledgement,
then reads the topic from the start as a member of group G until N records came or 30 s passed. Prints
JSON lines on stdout: {"produced": N}, then one {"partition", "offset", "key", "value"} per record read;
{"error": "..."} and exit 1 when the client fails, {"timeout": true, "consumed": k} and exit 2 when too
few records came. The same contract as compat/go/securitycheck and dev.ledgerline.compat.SecurityCheck.
"""
import argparse
import json
import sys
import time
import traceback

DEADLINE_S = 30.0


def emit(obj):
    print(json.dumps(obj), flush=True)


def text(b):
    return None if b is None else b.decode('utf-8')


def run_confluent(a):
    from confluent_kafka import Consumer, KafkaException, Producer

    conf = {
        'bootstrap.servers': a.bootstrap,
        'client.id': 'security-check-confluent',
        'security.protocol': a.security_protocol,
        'ssl.ca.location': a.ca_location,
    }
    if a.certificate_location:
        conf['ssl.certificate.location'] = a.certificate_location
        conf['ssl.key.location'] = a.key_location
    if a.sasl_mechanism:
        conf.update({'sasl.mechanism': a.sasl_mechanism, 'sasl.username': a.username, 'sasl.password': a.password})

    # librdkafka reports authentication and TLS failures through error_cb and keeps retrying; stop at the first.
    errors = []

    def on_error(err):
        errors.append(err)

    p = Producer({**conf, 'acks': 'all', 'error_cb': on_error})
    failures = []
    for i in range(a.count):
        p.produce(a.topic, key=('k%d' % i).encode(), value=('%s:%d' % (a.topic, i)).encode(), partition=0,
                  on_delivery=lambda err, msg: failures.append(err) if err is not None else None)
    deadline = time.monotonic() + DEADLINE_S
    while len(p) > 0 and not errors and time.monotonic() < deadline:
        p.flush(0.2)
    if errors or failures or len(p) > 0:
        raise KafkaException((errors + failures)[0] if errors or failures else 'produce timed out')
    emit({'produced': a.count})

    c = Consumer({**conf, 'group.id': a.group, 'auto.offset.reset': 'earliest', 'enable.auto.commit': False, 'error_cb': on_error})
    try:
        c.subscribe([a.topic])
        got = 0
        deadline = time.monotonic() + DEADLINE_S
        while got < a.count and time.monotonic() < deadline:
            if errors:
                raise KafkaException(errors[0])
            m = c.poll(0.5)
            if m is None:
                continue
            if m.error():
                raise KafkaException(m.error())
            emit({'partition': m.partition(), 'offset': m.offset(), 'key': text(m.key()), 'value': text(m.value())})
            got += 1
        return got
    finally:
        c.close()


def run_kafka_python(a):
    from kafka import KafkaConsumer, KafkaProducer

    conf = {
        'bootstrap_servers': a.bootstrap,
        'client_id': 'security-check-kafka-python',
        'security_protocol': a.security_protocol,
        'ssl_cafile': a.ca_location,
        'ssl_check_hostname': True,
    }
    if a.certificate_location:
        conf.update({'ssl_certfile': a.certificate_location, 'ssl_keyfile': a.key_location})
    if a.sasl_mechanism:
        conf.update({'sasl_mechanism': a.sasl_mechanism, 'sasl_plain_username': a.username, 'sasl_plain_password': a.password})

    p = KafkaProducer(acks='all', **conf)
    try:
        futures = [p.send(a.topic, key=('k%d' % i).encode(), value=('%s:%d' % (a.topic, i)).encode(), partition=0) for i in range(a.count)]
        for f in futures:
            f.get(timeout=DEADLINE_S)
    finally:
        p.close(timeout=5)
    emit({'produced': a.count})

    c = KafkaConsumer(a.topic, group_id=a.group, auto_offset_reset='earliest', enable_auto_commit=False, **conf)
    try:
        got = 0
        deadline = time.monotonic() + DEADLINE_S
        while got < a.count and time.monotonic() < deadline:
            for records in c.poll(timeout_ms=500).values():
                for m in records:
                    emit({'partition': m.partition, 'offset': m.offset, 'key': text(m.key), 'value': text(m.value)})
                    got += 1
        return got
    finally:
        c.close(autocommit=False)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('client', choices=['confluent-kafka', 'kafka-python'])
    ap.add_argument('--bootstrap', required=True)
    ap.add_argument('--topic', required=True)
    ap.add_argument('--count', type=int, required=True)
    ap.add_argument('--group', required=True)
    ap.add_argument('--security-protocol', required=True, choices=['SSL', 'SASL_SSL'])
    ap.add_argument('--ca-location', required=True)
    ap.add_argument('--certificate-location')
    ap.add_argument('--key-location')
    ap.add_argument('--sasl-mechanism')
    ap.add_argument('--username')
    ap.add_argument('--password')
    a = ap.parse_args()
    try:
        got = (run_confluent if a.client == 'confluent-kafka' else run_kafka_python)(a)
    except Exception as e:  # the client's own error, for the test's failure message
        traceback.print_exc()
        emit({'error': '%s: %s' % (type(e).__name__, e)})
        sys.exit(1)
    if got < a.count:
        emit({'timeout': True, 'consumed': got})
        sys.exit(2)


if __name__ == '__main__':
    main()
