package dev.ledgerline.compat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The {@code compaction} scenario (compat/README.md): what the broker's log cleaner leaves of a compact topic.
 * Every record is one batch of the same size (a 200,000-byte header {@code pad}, short keys and values, no
 * compression), so that with {@code segment.bytes=1048576} five batches fill a segment and the sixth rolls
 * it (Kafka's LogSegment.shouldRoll: the segment's size plus the batch's past segment.bytes), on any broker
 * that follows that rule. Keys k0..k3 are updated over six rounds (values {@code k<i>-r<round>}), k1 deleted
 * in round 3 and written again after, k3 deleted in the last round; then six records of key {@code roll} roll
 * the segment holding the last update, so it is sealed and cleanable (the active segment never is).
 *
 * <p>Tombstones are kept a day ({@code delete.retention.ms=86400000}): with 0 a tombstone goes at the first
 * cleaner pass after the one that set its delete horizon (KIP-534), and whether there is such a pass depends
 * on when the cleaner ran relative to the produces; kept, the outcome depends on the segment boundaries only:
 * the latest record of each key in the sealed segments, and every record of the active one, each at its
 * offset. The program waits (bounded) until the cleaner has removed something and the surviving set has not
 * changed for 5 s, then reports it as {@code "<offset> <key> <value>"}.
 */
final class Compaction {
  static final int PAD = 200_000;
  static final int KEYS = 4;
  static final int ROUNDS = 6;
  static final int ROLLS = 6;
  private static final long FIRST_SHRINK_MS = 45_000;
  private static final long STABLE_MS = 5_000;

  private final String bootstrap;
  private final String topic;
  private final Map<String, Object> result;
  private final List<String> violations;

  Compaction(String bootstrap, String prefix, Map<String, Object> result, List<String> violations) {
    this.bootstrap = bootstrap;
    this.topic = prefix;
    this.result = result;
    this.violations = violations;
  }

  /** The topic configs of the scenario (Kafka's names), the same on every broker and in every client. */
  static Map<String, String> topicConfigs() {
    Map<String, String> c = new TreeMap<>();
    c.put("cleanup.policy", "compact");
    c.put("segment.bytes", "1048576");
    c.put("segment.ms", "604800000");
    c.put("min.cleanable.dirty.ratio", "0.01");
    c.put("min.compaction.lag.ms", "0");
    c.put("delete.retention.ms", "86400000");
    return c;
  }

  /** The workload in produce order: {key, value}, value null for a tombstone. */
  static List<String[]> workload() {
    List<String[]> w = new ArrayList<>();
    for (int round = 0; round < ROUNDS; round++) {
      for (int k = 0; k < KEYS; k++) {
        boolean tombstone = (k == 1 && round == 3) || (k == 3 && round == ROUNDS - 1);
        w.add(new String[] {"k" + k, tombstone ? null : "k" + k + "-r" + round});
      }
    }
    for (int i = 0; i < ROLLS; i++) {
      w.add(new String[] {"roll", "roll-" + i});
    }
    return w;
  }

  void run() throws Exception {
    Properties ap = new Properties();
    ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    ap.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
    ap.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
    try (Admin admin = Admin.create(ap)) {
      admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1).configs(topicConfigs()))).all().get();
      TopicPartition tp = new TopicPartition(topic, 0);
      List<String[]> work = workload();
      List<Object> acked = new ArrayList<>();
      try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps())) {
        byte[] pad = Scenarios.pattern(PAD);
        // One record per produce, acknowledged before the next: one batch each, in order.
        for (String[] kv : work) {
          RecordHeaders h = new RecordHeaders();
          h.add("pad", pad);
          ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(topic, 0, null, Scenarios.bytes(kv[0]), kv[1] == null ? null : Scenarios.bytes(kv[1]), h);
          acked.add(producer.send(r).get().offset());
        }
      }
      result.put("acked", acked);

      List<String> survivors = read(tp);
      long t0 = System.currentTimeMillis();
      long changed = t0;
      boolean shrunk = survivors.size() < work.size();
      while (true) {
        long now = System.currentTimeMillis();
        if (shrunk && now - changed >= STABLE_MS) break;
        if (!shrunk && now - t0 > FIRST_SHRINK_MS) {
          violation("the log cleaner removed no record within " + FIRST_SHRINK_MS / 1000 + " s");
          break;
        }
        Thread.sleep(500);
        List<String> again = read(tp);
        if (!again.equals(survivors)) {
          survivors = again;
          changed = System.currentTimeMillis();
          shrunk = survivors.size() < work.size();
        }
      }
      result.put("survivors", survivors);
      result.put("earliest", admin.listOffsets(Map.of(tp, OffsetSpec.earliest())).partitionResult(tp).get().offset());
      result.put("latest", admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get().offset());
      checkSurvivors(survivors, work);
    }
  }

  /**
   * Kafka's guarantees for a compacted log, whatever the segment boundaries: a surviving record is the one
   * produced at its offset, and the latest record of every key survives (tombstones too, within
   * delete.retention.ms).
   */
  private void checkSurvivors(List<String> survivors, List<String[]> work) {
    Map<String, Integer> latest = new LinkedHashMap<>();
    for (int i = 0; i < work.size(); i++) {
      latest.put(work.get(i)[0], i);
    }
    for (String s : survivors) {
      String[] f = s.split(" ", 3);
      int o = Integer.parseInt(f[0]);
      String[] kv = o < work.size() ? work.get(o) : null;
      if (kv == null || !(kv[0] + " " + kv[1]).equals(f[1] + " " + f[2])) violation("offset " + o + " holds " + f[1] + " " + f[2] + ", not what was produced there");
    }
    for (Map.Entry<String, Integer> e : latest.entrySet()) {
      String[] kv = work.get(e.getValue());
      if (!survivors.contains(e.getValue() + " " + kv[0] + " " + kv[1])) violation("the latest record of " + e.getKey() + " (offset " + e.getValue() + ") is gone");
    }
  }

  /** The whole partition from the earliest offset to the end: "<offset> <key> <value>" per record. */
  private List<String> read(TopicPartition tp) {
    List<String> out = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(consumerProps())) {
      c.assign(List.of(tp));
      c.seekToBeginning(List.of(tp));
      long end = c.endOffsets(List.of(tp), Duration.ofSeconds(15)).get(tp);
      long deadline = System.currentTimeMillis() + 15_000;
      byte[] pad = Scenarios.pattern(PAD);
      while (c.position(tp) < end && System.currentTimeMillis() < deadline) {
        for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(500))) {
          out.add(r.offset() + " " + Scenarios.repr(r.key()) + " " + Scenarios.repr(r.value()));
          Header h = r.headers().lastHeader("pad");
          if (h == null || !Arrays.equals(h.value(), pad)) violation("offset " + r.offset() + ": the pad header read back differs from what was produced");
        }
      }
      if (c.position(tp) < end) violation("did not read up to offset " + end + " within 15 s");
    }
    return out;
  }

  /** Each violation once, however many reads see it. */
  private void violation(String what) {
    if (!violations.contains(what)) violations.add(what);
  }

  private Properties producerProps() {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
    p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "none");
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "20000");
    p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
    return p;
  }

  private Properties consumerProps() {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
    p.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
    return p;
  }
}
