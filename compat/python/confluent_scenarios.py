"""confluent-kafka (librdkafka) side of the compatibility suite; steps as in compat/README.md."""
import threading
import time

from confluent_kafka import (Consumer, KafkaError, KafkaException, Producer, TopicCollection, TopicPartition,
                             OFFSET_BEGINNING, OFFSET_END)
from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ConfigSource, NewTopic, OffsetSpec,
                                   ResourceType)
from confluent_kafka import ConsumerGroupTopicPartitions

from common import (BIG, COMPACTION_FIRST_SHRINK_S, COMPACTION_PAD, COMPACTION_STABLE_S, COMPACTION_TOPIC_CONFIGS, STANDARD, WAIT_S,
                    Run, compaction_check, compaction_workload, main, pattern, repr_bytes, standard_repr, wait_for)


def err_name(e):
    """librdkafka's name for the error (KafkaError.name()), else the exception's class name."""
    while True:
        if isinstance(e, KafkaException) and e.args and isinstance(e.args[0], KafkaError):
            return e.args[0].name()
        if isinstance(e, KafkaError):
            return e.name()
        if e.__cause__ is not None:
            e = e.__cause__
            continue
        return type(e).__name__


class Ck(Run):
    def __init__(self, bootstrap, prefix):
        super().__init__(prefix, err_name)
        self.bootstrap = bootstrap
        self._admin = None

    # ------------------------------------------------------------------------------------------ clients
    def admin(self):
        if self._admin is None:
            self._admin = AdminClient({'bootstrap.servers': self.bootstrap, 'socket.timeout.ms': 10000})
        return self._admin

    def producer(self, **extra):
        conf = {'bootstrap.servers': self.bootstrap, 'acks': 'all', 'linger.ms': 5, 'message.max.bytes': 4 * BIG,
                'message.timeout.ms': 20000}
        conf.update(extra)
        return self.closing(Producer(conf), lambda p: p.flush(5))

    def consumer(self, group=None, reset='earliest', isolation='read_uncommitted', **extra):
        conf = {'bootstrap.servers': self.bootstrap, 'group.id': group or (self.prefix + '-assign'),
                'enable.auto.commit': False, 'auto.offset.reset': reset, 'isolation.level': isolation,
                'enable.partition.eof': False}
        conf.update(extra)
        return self.closing(Consumer(conf), lambda c: c.close())

    def group_consumer(self, group, protocol='classic'):
        extra = {'group.protocol': protocol}
        if protocol == 'classic':
            extra.update({'session.timeout.ms': 10000, 'heartbeat.interval.ms': 500})
        return self.consumer(group=group, **extra)

    # ------------------------------------------------------------------------------------------ helpers
    def create(self, name, partitions=1, config=None, rf=1):
        fs = self.admin().create_topics([NewTopic(name, num_partitions=partitions, replication_factor=rf,
                                                  config=config or {})], operation_timeout=20)
        fs[name].result(timeout=WAIT_S)

    def create_ready(self, name, partitions=1, config=None):
        self.create(name, partitions, config)
        wait_for(lambda: len(self.describe_topic(name).partitions) == partitions)

    def describe_topic(self, name):
        return self.admin().describe_topics(TopicCollection([name]))[name].result(timeout=WAIT_S)

    def produce_all(self, producer, sends):
        """sends: list of kwargs for Producer.produce; returns offsets (or error names) in order."""
        out = [None] * len(sends)

        def cb(i):
            def done(err, msg):
                out[i] = {'error': err.name()} if err is not None else msg.offset()
            return done

        for i, kw in enumerate(sends):
            producer.produce(on_delivery=cb(i), **kw)
            producer.poll(0)
        producer.flush(WAIT_S)
        return out

    def produce_values(self, topic, stem, start, end, partition=0):
        p = self.producer()
        return self.produce_all(p, [dict(topic=topic, partition=partition, value=('%s%d' % (stem, i)).encode())
                                    for i in range(start, end)])

    def poll_until(self, consumer, count, timeout=WAIT_S):
        out = []
        deadline = time.monotonic() + timeout
        while len(out) < count and time.monotonic() < deadline:
            m = consumer.poll(0.2)
            if m is None:
                continue
            if m.error():
                if m.error().code() == KafkaError._PARTITION_EOF:
                    continue
                raise KafkaException(m.error())
            out.append(m)
        return out[:count]

    def wait_eof(self, consumer):
        """Polls until the end-of-partition event (enable.partition.eof); returns its offset, or None."""
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            m = consumer.poll(0.2)
            if m is not None and m.error() is not None and m.error().code() == KafkaError._PARTITION_EOF:
                return m.offset()
        return None

    @staticmethod
    def record(m):
        return {'p': m.partition(), 'o': m.offset(), 'k': repr_bytes(m.key()), 'v': repr_bytes(m.value()),
                'h': [[k, repr_bytes(v)] for k, v in (m.headers() or [])]}

    def read_from(self, topic, offset, count, isolation='read_uncommitted', partition=0):
        c = self.consumer(isolation=isolation)
        c.assign([TopicPartition(topic, partition, offset)])
        return [self.record(m) for m in self.poll_until(c, count)]

    def list_offset(self, tp, spec, isolation=None):
        def go():
            kw = {}
            fs = self.admin().list_offsets({tp: spec}, **kw)
            return fs[tp].result(timeout=WAIT_S).offset
        return self.attempt(go)

    def describe_configs(self, topic, keys):
        res = ConfigResource(ResourceType.TOPIC, topic)
        entries = self.admin().describe_configs([res])[res].result(timeout=WAIT_S)
        out = {}
        for k in keys:
            e = entries.get(k)
            src = e.source if e is None or not isinstance(e.source, int) else ConfigSource(e.source)
            out[k] = None if e is None else {'value': e.value, 'source': src.name, 'readOnly': e.is_read_only,
                                             'sensitive': e.is_sensitive}
        return out

    def list_my_groups(self):
        res = self.admin().list_consumer_groups().result(timeout=WAIT_S)
        out = []
        for g in sorted(res.valid, key=lambda g: g.group_id):
            if g.group_id.startswith(self.prefix):
                out.append({'group': g.group_id, 'state': g.state.name if g.state is not None else None,
                            'type': g.type.name if getattr(g, 'type', None) is not None else None,
                            'simple': g.is_simple_consumer_group})
        return out

    def describe_group(self, g):
        d = self.admin().describe_consumer_groups([g])[g].result(timeout=WAIT_S)
        return {'state': d.state.name, 'members': len(d.members), 'assignor': d.partition_assignor,
                'type': d.type.name if getattr(d, 'type', None) is not None else None}

    def committed_via_admin(self, g, topic):
        res = self.admin().list_consumer_group_offsets([ConsumerGroupTopicPartitions(g)])[g].result(timeout=WAIT_S)
        for tp in res.topic_partitions:
            if tp.topic == topic and tp.partition == 0:
                return tp.offset
        return None


# ---------------------------------------------------------------------------------------------- scenarios

def metadata(r):
    t = r.prefix
    r.create_ready(t, 3)
    md = r.admin().list_topics(timeout=WAIT_S)
    r.result['listed'] = r.mine(md.topics.keys())
    d = r.describe_topic(t)
    r.result['partitions'] = [{'partition': p.id, 'leaderKnown': p.leader is not None, 'replicas': len(p.replicas),
                               'isr': len(p.isr)} for p in sorted(d.partitions, key=lambda p: p.id)]
    r.result['brokers'] = len(md.brokers)
    cluster = r.admin().describe_cluster().result(timeout=WAIT_S)
    r.result['controllerKnown'] = cluster.controller is not None
    r.result['missing'] = r.attempt(lambda: r.describe_topic(t + '-missing') and None)
    missing_md = r.admin().list_topics(topic=t + '-missing', timeout=WAIT_S)
    tm = missing_md.topics.get(t + '-missing')
    r.result['missingMetadata'] = tm.error.name() if tm is not None and tm.error is not None else None
    r.check(t in md.topics, 'list_topics does not contain the created topic')


def create_topic(r):
    t = r.prefix
    cfg = {'cleanup.policy': 'compact', 'retention.ms': '3600000', 'max.message.bytes': '2000000'}
    r.result['create'] = r.attempt(lambda: r.create(t, 3, cfg))
    wait_for(lambda: len(r.describe_topic(t).partitions) == 3)
    r.result['partitions'] = len(r.describe_topic(t).partitions)
    r.result['configs'] = r.describe_configs(t, sorted(cfg))
    r.result['again'] = r.attempt(lambda: r.create(t, 3))
    r.result['badConfig'] = r.attempt(lambda: r.create(t + '-badcfg', 1, {'cleanup.policy': 'bogus'}))
    r.result['zeroPartitions'] = r.attempt(lambda: r.create(t + '-zero', 0))
    r.result['replicationFactor3'] = r.attempt(lambda: r.create(t + '-rf3', 1, rf=3))
    r.result['listed'] = r.mine(r.admin().list_topics(timeout=WAIT_S).topics.keys())


def produce_consume(r):
    codecs = {}
    for codec in ['none', 'gzip', 'snappy', 'lz4', 'zstd']:
        t = '%s-%s' % (r.prefix, codec)
        r.create_ready(t, 1, {'max.message.bytes': '4194304'})
        p = r.producer(**{'compression.type': codec})
        acks = r.produce_all(p, [dict(topic=t, partition=0, key=k, value=v, headers=h) for k, v, h in STANDARD])
        read = r.read_from(t, OFFSET_BEGINNING, 5)
        codecs[codec] = {'acks': acks, 'records': read}
        r.check(len(read) == 5, '%s: read back %d of 5 records' % (codec, len(read)))
        for i, rec in enumerate(read):
            r.check(rec == standard_repr(i), '%s: record %d read back differs from what was produced' % (codec, i))
    r.result['codecs'] = codecs


def consume_offsets(r):
    t = r.prefix
    r.create_ready(t, 1)
    base = (int(time.time()) * 1000) - 60000
    p = r.producer()
    r.produce_all(p, [dict(topic=t, partition=0, value=('m%d' % i).encode(), timestamp=base + i * 1000)
                      for i in range(10)])
    c = r.consumer()
    c.assign([TopicPartition(t, 0, OFFSET_BEGINNING)])
    r.result['earliest'] = [{'o': m.offset(), 'v': repr_bytes(m.value()), 'ts': m.timestamp()[1] - base}
                            for m in r.poll_until(c, 10)]
    tp = TopicPartition(t, 0)
    r.result['listOffsets'] = {
        'earliest': r.list_offset(tp, OffsetSpec.earliest()),
        'latest': r.list_offset(tp, OffsetSpec.latest()),
        'ts+4500': r.list_offset(tp, OffsetSpec.for_timestamp(base + 4500)),
        'ts+100000': r.list_offset(tp, OffsetSpec.for_timestamp(base + 100000)),
    }
    at = c.offsets_for_times([TopicPartition(t, 0, base + 4500)], timeout=WAIT_S)[0]
    c2 = r.consumer()
    c2.assign([TopicPartition(t, 0, at.offset)])
    r.result['fromTimestamp'] = [m.offset() for m in r.poll_until(c2, 5)]
    latest = r.consumer(**{'enable.partition.eof': True})
    latest.assign([TopicPartition(t, 0, OFFSET_END)])
    # librdkafka reports a position only after a message; the end-of-partition event carries it.
    r.result['latestPosition'] = r.wait_eof(latest)
    r.produce_all(p, [dict(topic=t, partition=0, value=('m%d' % i).encode(), timestamp=base + i * 1000)
                      for i in range(10, 12)])
    r.result['fromLatest'] = [m.offset() for m in r.poll_until(latest, 2)]
    r.check(len(r.result['earliest']) == 10, 'earliest read %d of 10' % len(r.result['earliest']))


def group_resume(r, prefix, protocol):
    t, g = prefix, prefix + '-g'
    r.create_ready(t, 1)
    r.produce_values(t, 'v', 0, 10)
    out = {}
    a = r.group_consumer(g, protocol)
    a.subscribe([t])
    first = r.poll_until(a, 4)
    out['firstRead'] = [m.offset() for m in first]
    a.commit(offsets=[TopicPartition(t, 0, 4)], asynchronous=False)
    out['committedAfterFirst'] = a.committed([TopicPartition(t, 0)], timeout=WAIT_S)[0].offset
    a.close()
    b = r.group_consumer(g, protocol)
    b.subscribe([t])
    second = r.poll_until(b, 6)
    out['secondRead'] = [m.offset() for m in second]
    b.commit(asynchronous=False)
    out['committedFinal'] = b.committed([TopicPartition(t, 0)], timeout=WAIT_S)[0].offset
    b.close()
    out['adminCommitted'] = r.committed_via_admin(g, t)
    return out


def group_regex(r, prefix):
    """A KIP-848 subscription by regular expression (librdkafka sends it in ConsumerGroupHeartbeat v1 and the
    broker resolves it): the topics it matches at first, then one created while the member is in the group."""
    for t in (prefix + '-rx-a', prefix + '-rx-b', prefix + '-other'):
        r.create_ready(t, 1)
        r.produce_values(t, t[len(prefix) + 1:] + '-', 0, 2)
    out = {}
    c = r.group_consumer(prefix + '-g', 'consumer')
    c.subscribe(['^' + prefix + '-rx-.*'])
    out['firstRead'] = sorted(m.value().decode() for m in r.poll_until(c, 4))
    r.create_ready(prefix + '-rx-c', 1)
    r.produce_values(prefix + '-rx-c', 'rx-c-', 0, 2)
    # The broker re-evaluates regexes when topics change; Kafka does it in the background within seconds.
    out['afterCreate'] = sorted(m.value().decode() for m in r.poll_until(c, 2, timeout=45))
    out['assignment'] = sorted('%s-%d' % (tp.topic[len(prefix) + 1:], tp.partition) for tp in c.assignment())
    c.close()
    return out


def group_split(r, prefix, protocol):
    t, g = prefix, prefix + '-g'
    r.create_ready(t, 4)
    members = [r.group_consumer(g, protocol), r.group_consumer(g, protocol)]
    for m in members:
        m.subscribe([t])
    seen = [{}, {}]
    assigned = [set(), set()]
    stop = threading.Event()
    failures = []

    def loop(i):
        try:
            while not stop.is_set():
                m = members[i].poll(0.1)
                if m is not None and not m.error():
                    seen[i][m.partition()] = m.value()
                assigned[i] = {tp.partition for tp in members[i].assignment()}
        except Exception as e:
            failures.append(e)

    threads = [threading.Thread(target=loop, args=(i,)) for i in range(2)]
    for th in threads:
        th.start()

    def balanced():
        x, y = set(assigned[0]), set(assigned[1])
        return x and y and len(x | y) == 4 and len(x) + len(y) == 4

    stable = wait_for(balanced)
    if stable:
        p = r.producer()
        r.produce_all(p, [dict(topic=t, partition=i, value=('p%d' % i).encode()) for i in range(4)])
        wait_for(lambda: len(seen[0]) + len(seen[1]) >= 4)
    stop.set()
    for th in threads:
        th.join(WAIT_S)
    final = [set(assigned[0]), set(assigned[1])]
    for m in members:
        m.close()
    assignment = sorted([sorted(a) for a in final], key=lambda a: (a[0] if a else -1, len(a)))
    consumed = sorted(set(seen[0]) | set(seen[1]))
    owned = all(p in final[i] for i in range(2) for p in seen[i])
    r.check(not failures, 'a member failed: %s' % (err_name(failures[0]) if failures else ''))
    r.check(stable, 'the two members never split the 4 partitions between them')
    out = {'balanced': bool(stable), 'sizes': sorted(len(a) for a in final), 'consumedPartitions': consumed,
           'consumedByOwner': owned}
    # Range (librdkafka's default) splits the same way whatever the join order; KIP-848's server-side
    # assignors are sticky, so there only the split itself is comparable.
    if protocol == 'classic':
        out['assignment'] = assignment
    return out


def idempotent(r):
    t = r.prefix
    r.create_ready(t, 1)
    p = r.producer(**{'enable.idempotence': True, 'max.in.flight.requests.per.connection': 5})
    acks = []
    for batch in range(4):
        acks += r.produce_all(p, [dict(topic=t, partition=0, value=('i%d' % i).encode())
                                  for i in range(batch * 5, batch * 5 + 5)])
    r.result['acks'] = acks
    read = r.read_from(t, OFFSET_BEGINNING, 20)
    r.result['offsets'] = [x['o'] for x in read]
    r.result['values'] = [x['v'] for x in read]
    r.check(len(read) == 20, 'read back %d of 20' % len(read))


def delete_topic(r):
    t = r.prefix
    r.create_ready(t, 2)
    r.produce_values(t, 'd', 0, 1)
    r.result['listedBefore'] = r.mine(r.admin().list_topics(timeout=WAIT_S).topics.keys())
    r.result['delete'] = r.attempt(lambda: r.admin().delete_topics([t], operation_timeout=20)[t].result(WAIT_S))
    r.result['goneFromList'] = wait_for(lambda: t not in r.admin().list_topics(timeout=5).topics)
    r.result['describeAfter'] = r.attempt(lambda: r.describe_topic(t) and None)
    r.result['deleteAgain'] = r.attempt(lambda: r.admin().delete_topics([t], operation_timeout=20)[t].result(WAIT_S))

    def recreate():
        deadline = time.monotonic() + WAIT_S
        while True:
            try:
                return r.create(t, 1)
            except KafkaException as e:
                if time.monotonic() > deadline or err_name(e) not in ('TOPIC_ALREADY_EXISTS', 'UNKNOWN_TOPIC_OR_PART'):
                    raise
                time.sleep(0.2)

    r.result['recreate'] = r.attempt(recreate)
    wait_for(lambda: len(r.describe_topic(t).partitions) == 1)
    r.result['recreatedLatest'] = r.list_offset(TopicPartition(t, 0), OffsetSpec.latest())


def configs(r):
    t = r.prefix
    r.create_ready(t, 1, {'retention.ms': '86400000'})
    keys = ['cleanup.policy', 'max.message.bytes', 'retention.ms', 'segment.bytes']
    r.result['initial'] = r.describe_configs(t, keys)

    def alter(*entries):
        res = ConfigResource(ResourceType.TOPIC, t, incremental_configs=list(entries))
        return r.admin().incremental_alter_configs([res])[res].result(timeout=WAIT_S)

    r.result['alter'] = r.attempt(lambda: alter(
        ConfigEntry('retention.ms', '3600000', incremental_operation=AlterConfigOpType.SET),
        ConfigEntry('cleanup.policy', 'compact', incremental_operation=AlterConfigOpType.SET)))
    # A change is applied through the broker's metadata log; a describe right after may still see the old
    # value (on Kafka too): wait, bounded, until it shows, then report what is seen.
    wait_for(lambda: r.describe_configs(t, keys)['retention.ms']['value'] == '3600000')
    r.result['afterAlter'] = r.describe_configs(t, keys)
    r.result['reset'] = r.attempt(lambda: alter(
        ConfigEntry('retention.ms', None, incremental_operation=AlterConfigOpType.DELETE)))
    wait_for(lambda: r.describe_configs(t, keys)['retention.ms']['value'] == '604800000')
    r.result['afterReset'] = r.describe_configs(t, keys)
    r.result['invalidValue'] = r.attempt(lambda: alter(
        ConfigEntry('retention.ms', 'abc', incremental_operation=AlterConfigOpType.SET)))
    r.result['unknownKey'] = r.attempt(lambda: alter(
        ConfigEntry('no.such.config', '1', incremental_operation=AlterConfigOpType.SET)))
    r.result['missingTopic'] = r.attempt(lambda: r.describe_configs(t + '-missing', keys) and None)


def delete_records(r):
    t = r.prefix
    r.create_ready(t, 1)
    r.produce_values(t, 'r', 0, 10)

    def delete(before):
        tp = TopicPartition(t, 0, before)
        return r.admin().delete_records([tp])[tp].result(timeout=WAIT_S).low_watermark

    tp = TopicPartition(t, 0)
    r.result['deleteBefore4'] = r.attempt(lambda: delete(4))
    r.result['earliest'] = r.list_offset(tp, OffsetSpec.earliest())
    r.result['latest'] = r.list_offset(tp, OffsetSpec.latest())
    r.result['readFromEarliest'] = [x['o'] for x in r.read_from(t, OFFSET_BEGINNING, 6)]
    r.result['deleteBeyondEnd'] = r.attempt(lambda: delete(20))
    r.result['deleteAll'] = r.attempt(lambda: delete(OFFSET_END))
    r.result['earliestAfterAll'] = r.list_offset(tp, OffsetSpec.earliest())


def groups_admin(r):
    t, g, busy = r.prefix, r.prefix + '-g', r.prefix + '-busy'
    r.create_ready(t, 1)
    r.produce_values(t, 'g', 0, 3)
    c = r.group_consumer(g)
    c.subscribe([t])
    r.poll_until(c, 3)
    c.commit(asynchronous=False)
    c.close()
    r.result['listed'] = r.list_my_groups()
    r.result['described'] = r.describe_group(g)
    r.result['offsets'] = r.committed_via_admin(g, t)
    active = r.group_consumer(busy)
    active.subscribe([t])
    wait_for(lambda: active.poll(0.1) is None and len(active.assignment()) > 0)
    r.result['deleteActive'] = r.attempt(lambda: r.admin().delete_consumer_groups([busy])[busy].result(WAIT_S))
    active.close()
    r.result['delete'] = r.attempt(lambda: r.admin().delete_consumer_groups([g])[g].result(WAIT_S))
    r.result['listedAfterDelete'] = r.list_my_groups()
    r.result['describedAfterDelete'] = r.attempt(lambda: r.describe_group(g))
    r.result['deleteAgain'] = r.attempt(lambda: r.admin().delete_consumer_groups([g])[g].result(WAIT_S))


def err_missing_topic(r):
    t = r.prefix + '-missing'
    p = r.producer(**{'message.timeout.ms': 5000})
    r.result['produce'] = r.produce_all(p, [dict(topic=t, value=b'x')])[0]
    r.result['describe'] = r.attempt(lambda: r.describe_topic(t) and None)
    tm = r.admin().list_topics(topic=t, timeout=WAIT_S).topics.get(t)
    r.result['metadata'] = tm.error.name() if tm is not None and tm.error is not None else None
    r.result['createdByProduce'] = t in r.admin().list_topics(timeout=WAIT_S).topics


def err_offset_out_of_range(r):
    t = r.prefix
    r.create_ready(t, 1)
    r.produce_values(t, 'o', 0, 5)
    none = r.consumer(reset='error')
    none.assign([TopicPartition(t, 0, 100)])

    def poll_error():
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            m = none.poll(0.2)
            if m is not None:
                return {'error': m.error().name()} if m.error() else 'records'
        return 'no error'

    r.result['resetNone'] = poll_error()
    earliest = r.consumer(reset='earliest')
    earliest.assign([TopicPartition(t, 0, 100)])
    r.result['resetEarliest'] = [m.offset() for m in r.poll_until(earliest, 5)]
    latest = r.consumer(reset='latest', **{'enable.partition.eof': True})
    latest.assign([TopicPartition(t, 0, 100)])
    r.result['resetLatestPosition'] = r.wait_eof(latest)


def err_oversize(r):
    t = r.prefix
    r.create_ready(t, 1, {'max.message.bytes': '1024'})
    p = r.producer()
    r.result['oversize'] = r.produce_all(p, [dict(topic=t, partition=0, value=pattern(4000))])[0]
    r.result['small'] = r.produce_all(p, [dict(topic=t, partition=0, value=b'ok')])[0]
    r.result['read'] = r.read_from(t, OFFSET_BEGINNING, 1)


def transactions(r):
    t = r.prefix
    r.create_ready(t, 1)
    p = r.producer(**{'transactional.id': r.prefix + '-tx'})
    p.init_transactions(WAIT_S)
    p.begin_transaction()
    for v in ['t0', 't1', 't2']:
        p.produce(t, value=v.encode(), partition=0)
    p.commit_transaction(WAIT_S)
    p.begin_transaction()
    for v in ['a0', 'a1']:
        p.produce(t, value=v.encode(), partition=0)
    p.flush(WAIT_S)
    p.abort_transaction(WAIT_S)
    p.begin_transaction()
    p.produce(t, value=b't3', partition=0)
    p.commit_transaction(WAIT_S)
    committed = r.read_from(t, OFFSET_BEGINNING, 4, isolation='read_committed')
    uncommitted = r.read_from(t, OFFSET_BEGINNING, 6, isolation='read_uncommitted')
    r.result['readCommitted'] = ['%d:%s' % (x['o'], x['v']) for x in committed]
    r.result['readUncommitted'] = ['%d:%s' % (x['o'], x['v']) for x in uncommitted]
    r.result['latest'] = r.list_offset(TopicPartition(t, 0), OffsetSpec.latest())


def compaction(r):
    """What the log cleaner leaves of a compact topic, offset by offset (compat/README.md)."""
    t = r.prefix
    r.create_ready(t, 1, COMPACTION_TOPIC_CONFIGS)
    work = compaction_workload()
    pad = pattern(COMPACTION_PAD)
    p = r.producer(**{'linger.ms': 0, 'compression.type': 'none'})
    acked = []
    # One record per produce, delivered before the next: one batch each.
    for k, v in work:
        acked.extend(r.produce_all(p, [dict(topic=t, partition=0, key=k.encode(), value=None if v is None else v.encode(),
                                            headers=[('pad', pad)])]))
    r.result['acked'] = acked

    def violation(what):
        if what not in r.violations:
            r.violations.append(what)

    def read_all():
        """The whole partition from the earliest offset to its end: '<offset> <key> <value>' per record."""
        c = Consumer({'bootstrap.servers': r.bootstrap, 'group.id': r.prefix + '-read', 'enable.auto.commit': False,
                      'enable.partition.eof': True, 'fetch.max.bytes': 4 * BIG})
        try:
            c.assign([TopicPartition(t, 0, OFFSET_BEGINNING)])
            out = []
            deadline = time.monotonic() + WAIT_S
            while True:
                if time.monotonic() > deadline:
                    violation('did not read to the end of the partition within %d s' % WAIT_S)
                    return out
                m = c.poll(0.2)
                if m is None:
                    continue
                if m.error():
                    if m.error().code() == KafkaError._PARTITION_EOF:
                        return out
                    raise KafkaException(m.error())
                out.append('%d %s %s' % (m.offset(), repr_bytes(m.key()), 'null' if m.value() is None else repr_bytes(m.value())))
                if dict(m.headers() or []).get('pad') != pad:
                    violation('offset %d: the pad header read back differs from what was produced' % m.offset())
        finally:
            c.close()

    survivors = read_all()
    t0 = changed = time.monotonic()
    while True:
        now = time.monotonic()
        if len(survivors) < len(work) and now - changed >= COMPACTION_STABLE_S:
            break
        if len(survivors) >= len(work) and now - t0 > COMPACTION_FIRST_SHRINK_S:
            violation('the log cleaner removed no record within %d s' % COMPACTION_FIRST_SHRINK_S)
            break
        time.sleep(0.5)
        again = read_all()
        if again != survivors:
            survivors = again
            changed = time.monotonic()
    r.result['survivors'] = survivors
    tp = TopicPartition(t, 0)
    r.result['earliest'] = r.list_offset(tp, OffsetSpec.earliest())
    r.result['latest'] = r.list_offset(tp, OffsetSpec.latest())
    for v in compaction_check(survivors, work):
        violation(v)


SCENARIOS = {
    'metadata': metadata,
    'create-topic': create_topic,
    'produce-consume': produce_consume,
    'consume-offsets': consume_offsets,
    'group-resume': lambda r: r.result.update(group_resume(r, r.prefix, 'classic')),
    'group-split': lambda r: r.result.update(group_split(r, r.prefix, 'classic')),
    'group-848': lambda r: r.result.update({'resume': group_resume(r, r.prefix + '-r', 'consumer'),
                                            'split': group_split(r, r.prefix + '-s', 'consumer'),
                                            'regex': group_regex(r, r.prefix + '-x')}),
    'idempotent': idempotent,
    'delete-topic': delete_topic,
    'configs': configs,
    'delete-records': delete_records,
    'groups-admin': groups_admin,
    'err-missing-topic': err_missing_topic,
    'err-offset-out-of-range': err_offset_out_of_range,
    'err-oversize': err_oversize,
    'transactions': transactions,
    'compaction': compaction,
}

if __name__ == '__main__':
    main(SCENARIOS, Ck)
