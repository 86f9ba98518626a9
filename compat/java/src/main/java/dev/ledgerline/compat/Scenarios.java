package dev.ledgerline.compat;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Optional;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.DescribeProducersResult;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.FeatureMetadata;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.QuorumInfo;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.consumer.SubscriptionPattern;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The kafka-clients side of the compatibility suite: one scenario per run, its observable outcome printed
 * as one JSON object on stdout ({"result": ..., "violations": [...]}). The steps follow compat/README.md
 * ("Scenarios") exactly, as every other client's program does, so results can be compared broker to broker.
 *
 * Usage: Scenarios <scenario> <bootstrap> <prefix>; every topic and group name starts with prefix.
 */
public final class Scenarios {
  private static final Duration WAIT = Duration.ofSeconds(15);
  private static final int BIG = 1 << 20;

  private final String bootstrap;
  private final String prefix;
  private final Map<String, Object> result = new LinkedHashMap<>();
  private final List<String> violations = new ArrayList<>();
  private final List<AutoCloseable> closeables = new ArrayList<>();

  private Scenarios(String bootstrap, String prefix) {
    this.bootstrap = bootstrap;
    this.prefix = prefix;
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 3) {
      System.err.println("usage: Scenarios <scenario> <bootstrap> <prefix>");
      System.exit(2);
    }
    Scenarios s = new Scenarios(args[1], args[2]);
    int code = 0;
    try {
      s.run(args[0]);
    } catch (Throwable t) {
      t.printStackTrace();
      s.violations.add("aborted: " + err(t) + ": " + firstLine(t));
      code = 0; // the outcome (with the abort) is still reported; the runner sees it as a failure
    } finally {
      for (AutoCloseable c : s.closeables) {
        try {
          c.close();
        } catch (Exception ignored) {
          // closing after a failure may fail again; the outcome is already recorded
        }
      }
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("result", s.result);
    out.put("violations", s.violations);
    System.out.println(Json.write(out));
    System.out.flush();
    System.exit(code);
  }

  private void run(String scenario) throws Exception {
    switch (scenario) {
      case "metadata" -> metadata();
      case "create-topic" -> createTopic();
      case "produce-consume" -> produceConsume();
      case "consume-offsets" -> consumeOffsets();
      case "group-resume" -> result.putAll(groupResume(prefix, "classic"));
      case "group-split" -> result.putAll(groupSplit(prefix, "classic"));
      case "group-848" -> {
        result.put("resume", groupResume(prefix + "-r", "consumer"));
        result.put("split", groupSplit(prefix + "-s", "consumer"));
        result.put("regex", groupRegex(prefix + "-x"));
        result.put("migrate", groupMigrate(prefix + "-m"));
      }
      case "idempotent" -> idempotent();
      case "delete-topic" -> deleteTopic();
      case "configs" -> configs();
      case "delete-records" -> deleteRecords();
      case "groups-admin" -> groupsAdmin();
      case "admin-single-node" -> adminSingleNode();
      case "err-missing-topic" -> errMissingTopic();
      case "err-offset-out-of-range" -> errOffsetOutOfRange();
      case "err-oversize" -> errOversize();
      case "transactions" -> transactions();
      case "compaction" -> new Compaction(bootstrap, prefix, result, violations).run();
      default -> throw new IllegalArgumentException("unknown scenario " + scenario);
    }
  }

  // ---------------------------------------------------------------------------------------------- scenarios

  private void metadata() throws Exception {
    Admin admin = admin();
    String t = prefix;
    admin.createTopics(List.of(new NewTopic(t, 3, (short) 1))).all().get();
    waitForTopic(admin, t, 3);
    Set<String> names = admin.listTopics(new ListTopicsOptions().listInternal(false)).names().get();
    result.put("listed", mine(names));
    TopicDescription d = admin.describeTopics(List.of(t)).allTopicNames().get().get(t);
    result.put("partitions", describePartitions(d));
    result.put("brokers", admin.describeCluster().nodes().get().size());
    result.put("controllerKnown", admin.describeCluster().controller().get() != null);
    result.put("missing", attempt(() -> admin.describeTopics(List.of(prefix + "-missing")).allTopicNames().get()));
    check(names.contains(t), "listTopics does not contain the created topic");
  }

  private void createTopic() throws Exception {
    Admin admin = admin();
    String t = prefix;
    Map<String, String> cfg = new TreeMap<>(Map.of(
        "cleanup.policy", "compact", "retention.ms", "3600000", "max.message.bytes", "2000000"));
    result.put("create", attempt(() -> admin.createTopics(List.of(new NewTopic(t, 3, (short) 1).configs(cfg))).all().get()));
    waitForTopic(admin, t, 3);
    TopicDescription d = admin.describeTopics(List.of(t)).allTopicNames().get().get(t);
    result.put("partitions", d.partitions().size());
    result.put("configs", describeConfigs(admin, t, cfg.keySet()));
    result.put("again", attempt(() -> admin.createTopics(List.of(new NewTopic(t, 3, (short) 1))).all().get()));
    result.put("badConfig", attempt(() -> admin.createTopics(List.of(
        new NewTopic(prefix + "-badcfg", 1, (short) 1).configs(Map.of("cleanup.policy", "bogus")))).all().get()));
    result.put("zeroPartitions", attempt(() -> admin.createTopics(List.of(
        new NewTopic(prefix + "-zero", 0, (short) 1))).all().get()));
    result.put("replicationFactor3", attempt(() -> admin.createTopics(List.of(
        new NewTopic(prefix + "-rf3", 1, (short) 3))).all().get()));
    Set<String> names = admin.listTopics().names().get();
    result.put("listed", mine(names));
  }

  private void produceConsume() throws Exception {
    Admin admin = admin();
    Map<String, Object> codecs = new LinkedHashMap<>();
    for (String codec : List.of("none", "gzip", "snappy", "lz4", "zstd")) {
      String t = prefix + "-" + codec;
      admin.createTopics(List.of(new NewTopic(t, 1, (short) 1).configs(Map.of("max.message.bytes", "4194304")))).all().get();
      waitForTopic(admin, t, 1);
      Properties p = producerProps();
      p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec);
      KafkaProducer<byte[], byte[]> producer = closing(new KafkaProducer<>(p));
      List<Future<RecordMetadata>> acks = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        acks.add(producer.send(standardRecord(t, i)));
      }
      producer.flush();
      List<Object> offsets = new ArrayList<>();
      for (Future<RecordMetadata> f : acks) {
        offsets.add(f.get().offset());
      }
      List<Map<String, Object>> read = readFrom(t, 0, 0L, 5, IsolationLevel.READ_UNCOMMITTED);
      Map<String, Object> one = new LinkedHashMap<>();
      one.put("acks", offsets);
      one.put("records", read);
      codecs.put(codec, one);
      check(read.size() == 5, codec + ": read back " + read.size() + " of 5 records");
      for (int i = 0; i < Math.min(5, read.size()); i++) {
        check(sameRecord(read.get(i), i), codec + ": record " + i + " read back differs from what was produced");
      }
    }
    result.put("codecs", codecs);
  }

  private void consumeOffsets() throws Exception {
    Admin admin = admin();
    String t = prefix;
    admin.createTopics(List.of(new NewTopic(t, 1, (short) 1))).all().get();
    waitForTopic(admin, t, 1);
    long base = (System.currentTimeMillis() / 1000) * 1000 - 60_000;
    KafkaProducer<byte[], byte[]> producer = closing(new KafkaProducer<>(producerProps()));
    for (int i = 0; i < 10; i++) {
      producer.send(new ProducerRecord<>(t, 0, base + i * 1000L, null, bytes("m" + i))).get();
    }
    TopicPartition tp = new TopicPartition(t, 0);
    KafkaConsumer<byte[], byte[]> c = closing(consumer(null, "none", IsolationLevel.READ_UNCOMMITTED));
    c.assign(List.of(tp));
    c.seekToBeginning(List.of(tp));
    List<Map<String, Object>> earliest = new ArrayList<>();
    for (ConsumerRecord<byte[], byte[]> r : pollUntil(c, 10)) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("o", r.offset());
      m.put("v", repr(r.value()));
      m.put("ts", r.timestamp() - base);
      earliest.add(m);
    }
    result.put("earliest", earliest);
    Map<String, Object> lo = new LinkedHashMap<>();
    lo.put("earliest", listOffset(admin, tp, OffsetSpec.earliest()));
    lo.put("latest", listOffset(admin, tp, OffsetSpec.latest()));
    lo.put("ts+4500", listOffset(admin, tp, OffsetSpec.forTimestamp(base + 4500)));
    lo.put("ts+100000", listOffset(admin, tp, OffsetSpec.forTimestamp(base + 100_000)));
    result.put("listOffsets", lo);
    Map<TopicPartition, OffsetAndTimestamp> byTime = c.offsetsForTimes(Map.of(tp, base + 4500));
    OffsetAndTimestamp at = byTime.get(tp);
    c.seek(tp, at.offset());
    result.put("fromTimestamp", offsetsOf(pollUntil(c, 5)));
    KafkaConsumer<byte[], byte[]> latest = closing(consumer(null, "none", IsolationLevel.READ_UNCOMMITTED));
    latest.assign(List.of(tp));
    latest.seekToEnd(List.of(tp));
    result.put("latestPosition", latest.position(tp, WAIT));
    for (int i = 10; i < 12; i++) {
      producer.send(new ProducerRecord<>(t, 0, base + i * 1000L, null, bytes("m" + i))).get();
    }
    result.put("fromLatest", offsetsOf(pollUntil(latest, 2)));
    check(earliest.size() == 10, "earliest read " + earliest.size() + " of 10");
  }

  private Map<String, Object> groupResume(String p, String protocol) throws Exception {
    Admin admin = admin();
    String t = p;
    String g = p + "-g";
    admin.createTopics(List.of(new NewTopic(t, 1, (short) 1))).all().get();
    waitForTopic(admin, t, 1);
    produceValues(t, 0, "v", 0, 10);
    TopicPartition tp = new TopicPartition(t, 0);
    Map<String, Object> out = new LinkedHashMap<>();
    KafkaConsumer<byte[], byte[]> a = groupConsumer(g, protocol);
    a.subscribe(List.of(t));
    List<ConsumerRecord<byte[], byte[]>> first = pollUntil(a, 4).subList(0, 4);
    out.put("firstRead", offsetsOf(first));
    a.commitSync(Map.of(tp, new OffsetAndMetadata(4)));
    out.put("committedAfterFirst", committedOffset(a.committed(Set.of(tp)), tp));
    a.close();
    KafkaConsumer<byte[], byte[]> b = groupConsumer(g, protocol);
    b.subscribe(List.of(t));
    List<ConsumerRecord<byte[], byte[]>> second = pollUntil(b, 6);
    out.put("secondRead", offsetsOf(second));
    b.commitSync();
    out.put("committedFinal", committedOffset(b.committed(Set.of(tp)), tp));
    b.close();
    Map<TopicPartition, OffsetAndMetadata> viaAdmin = admin.listConsumerGroupOffsets(g).partitionsToOffsetAndMetadata().get();
    out.put("adminCommitted", committedOffset(viaAdmin, tp));
    return out;
  }

  /**
   * A KIP-848 subscription by regular expression, resolved by the broker (SubscriptionPattern, sent in
   * ConsumerGroupHeartbeat v1): the topics it matches at first, then one created while the member is in the group.
   */
  private Map<String, Object> groupRegex(String p) throws Exception {
    Admin admin = admin();
    admin.createTopics(List.of(new NewTopic(p + "-rx-a", 1, (short) 1), new NewTopic(p + "-rx-b", 1, (short) 1), new NewTopic(p + "-other", 1, (short) 1)))
        .all().get();
    for (String t : List.of(p + "-rx-a", p + "-rx-b", p + "-other")) {
      waitForTopic(admin, t, 1);
      produceValues(t, 0, t.substring(p.length() + 1) + "-", 0, 2);
    }
    Map<String, Object> out = new LinkedHashMap<>();
    KafkaConsumer<byte[], byte[]> c = groupConsumer(p + "-g", "consumer");
    c.subscribe(new SubscriptionPattern(p + "-rx-.*"));
    out.put("firstRead", valuesOf(pollUntil(c, 4)));
    admin.createTopics(List.of(new NewTopic(p + "-rx-c", 1, (short) 1))).all().get();
    waitForTopic(admin, p + "-rx-c", 1);
    produceValues(p + "-rx-c", 0, "rx-c-", 0, 2);
    // Kafka re-evaluates regexes in the background when topics change, at most every few seconds: a longer wait.
    out.put("afterCreate", valuesOf(pollUntil(c, 2, Duration.ofSeconds(45))));
    Set<String> assigned = new TreeSet<>();
    for (TopicPartition tp : c.assignment()) {
      assigned.add(tp.topic().substring(p.length() + 1) + "-" + tp.partition());
    }
    out.put("assignment", new ArrayList<>(assigned));
    c.close();
    return out;
  }

  /**
   * One group, both protocols (KIP-848's online migration): a classic consumer alone, a consumer-protocol one
   * joining it (the broker upgrades the group), then leaving again (the broker downgrades it).
   */
  private Map<String, Object> groupMigrate(String p) throws Exception {
    Admin admin = admin();
    admin.createTopics(List.of(new NewTopic(p, 4, (short) 1))).all().get();
    waitForTopic(admin, p, 4);
    String g = p + "-g";
    Map<String, Object> out = new LinkedHashMap<>();
    KafkaConsumer<byte[], byte[]> classic = groupConsumer(g, "classic");
    classic.subscribe(List.of(p));
    Set<Integer> classicOwns = Collections.synchronizedSet(new TreeSet<>());
    Set<Integer> modernOwns = Collections.synchronizedSet(new TreeSet<>());
    AtomicBoolean stop = new AtomicBoolean(false);
    AtomicBoolean modernStop = new AtomicBoolean(false);
    List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
    Thread classicThread = pollAssignments(classic, classicOwns, stop, failures);
    try {
      out.put("classicAlone", waitFor(() -> snapshot(classicOwns).size() == 4, WAIT));
      out.put("typeBefore", groupType(admin, g));
      KafkaConsumer<byte[], byte[]> modern = groupConsumer(g, "consumer");
      modern.subscribe(List.of(p));
      Thread modernThread = pollAssignments(modern, modernOwns, modernStop, failures);
      boolean split = waitFor(() -> {
        Set<Integer> x = snapshot(classicOwns);
        Set<Integer> y = snapshot(modernOwns);
        Set<Integer> union = new TreeSet<>(x);
        union.addAll(y);
        return x.size() == 2 && y.size() == 2 && union.size() == 4;
      }, Duration.ofSeconds(45));
      out.put("split", split);
      out.put("typeDuring", groupType(admin, g));
      modernStop.set(true);
      modernThread.join();
      modern.close();
      out.put("classicAfterLeave", waitFor(() -> snapshot(classicOwns).size() == 4, Duration.ofSeconds(45)));
      out.put("typeAfter", groupType(admin, g));
    } finally {
      stop.set(true);
      classicThread.join();
    }
    out.put("failures", failures.size());
    classic.close();
    return out;
  }

  private Thread pollAssignments(KafkaConsumer<byte[], byte[]> c, Set<Integer> owns, AtomicBoolean stop, List<Throwable> failures) {
    Thread th = new Thread(() -> {
      try {
        while (!stop.get()) {
          c.poll(Duration.ofMillis(100));
          Set<Integer> now = new TreeSet<>();
          for (TopicPartition tp : c.assignment()) {
            now.add(tp.partition());
          }
          synchronized (owns) {
            owns.clear();
            owns.addAll(now);
          }
        }
      } catch (Throwable e) {
        failures.add(e);
      }
    });
    th.start();
    return th;
  }

  private static String groupType(Admin admin, String group) throws Exception {
    for (GroupListing l : admin.listGroups().all().get()) {
      if (l.groupId().equals(group)) {
        return l.type().map(Object::toString).orElse("unknown");
      }
    }
    return "absent";
  }

  private static List<Object> valuesOf(List<ConsumerRecord<byte[], byte[]>> rs) {
    Set<String> sorted = new TreeSet<>();
    for (ConsumerRecord<byte[], byte[]> r : rs) {
      sorted.add(new String(r.value(), StandardCharsets.UTF_8));
    }
    return new ArrayList<>(sorted);
  }

  private Map<String, Object> groupSplit(String p, String protocol) throws Exception {
    Admin admin = admin();
    String t = p;
    String g = p + "-g";
    admin.createTopics(List.of(new NewTopic(t, 4, (short) 1))).all().get();
    waitForTopic(admin, t, 4);
    KafkaConsumer<byte[], byte[]> a = groupConsumer(g, protocol);
    KafkaConsumer<byte[], byte[]> b = groupConsumer(g, protocol);
    a.subscribe(List.of(t));
    b.subscribe(List.of(t));
    // Each consumer is polled from its own thread, as an application would run them.
    List<KafkaConsumer<byte[], byte[]>> members = List.of(a, b);
    List<Map<Integer, String>> seen = List.of(Collections.synchronizedMap(new TreeMap<>()), Collections.synchronizedMap(new TreeMap<>()));
    List<Set<Integer>> assigned = List.of(Collections.synchronizedSet(new TreeSet<>()), Collections.synchronizedSet(new TreeSet<>()));
    AtomicBoolean stop = new AtomicBoolean(false);
    List<Thread> threads = new ArrayList<>();
    List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
    for (int i = 0; i < 2; i++) {
      final int idx = i;
      Thread th = new Thread(() -> {
        try {
          KafkaConsumer<byte[], byte[]> c = members.get(idx);
          while (!stop.get()) {
            for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(100))) {
              seen.get(idx).put(r.partition(), new String(r.value(), StandardCharsets.UTF_8));
            }
            Set<Integer> now = new TreeSet<>();
            for (TopicPartition tp : c.assignment()) {
              now.add(tp.partition());
            }
            synchronized (assigned.get(idx)) {
              assigned.get(idx).clear();
              assigned.get(idx).addAll(now);
            }
          }
        } catch (Throwable e) {
          failures.add(e);
        }
      });
      th.start();
      threads.add(th);
    }
    BooleanSupplier balanced = () -> {
      Set<Integer> x = snapshot(assigned.get(0));
      Set<Integer> y = snapshot(assigned.get(1));
      Set<Integer> union = new TreeSet<>(x);
      union.addAll(y);
      return !x.isEmpty() && !y.isEmpty() && union.size() == 4 && x.size() + y.size() == 4;
    };
    boolean stable = waitFor(balanced, WAIT);
    if (stable) {
      produceOnePerPartition(t, 4);
      waitFor(() -> seen.get(0).size() + seen.get(1).size() >= 4, WAIT);
    }
    stop.set(true);
    for (Thread th : threads) {
      th.join(WAIT.toMillis());
    }
    a.close();
    b.close();
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("balanced", stable);
    List<List<Integer>> assignment = new ArrayList<>();
    assignment.add(new ArrayList<>(snapshot(assigned.get(0))));
    assignment.add(new ArrayList<>(snapshot(assigned.get(1))));
    assignment.sort((l, r) -> l.isEmpty() || r.isEmpty() ? Integer.compare(l.size(), r.size()) : Integer.compare(l.get(0), r.get(0)));
    // The classic protocol runs the client's range assignor, which splits 4 partitions the same way
    // whichever member joins first. KIP-848's server-side assignors are sticky, so which partitions a
    // member gets depends on the order of joins; only the split itself is comparable there.
    if (protocol.equals("classic")) {
      out.put("assignment", assignment);
    }
    out.put("sizes", assignment.stream().map(List::size).sorted().toList());
    boolean owned = true;
    Set<Integer> consumed = new TreeSet<>();
    for (int i = 0; i < 2; i++) {
      Set<Integer> mineNow = snapshot(assigned.get(i));
      for (Integer partition : new TreeSet<>(seen.get(i).keySet())) {
        consumed.add(partition);
        owned &= mineNow.contains(partition);
      }
    }
    out.put("consumedPartitions", new ArrayList<>(consumed));
    out.put("consumedByOwner", owned);
    check(failures.isEmpty(), "a member failed: " + (failures.isEmpty() ? "" : err(failures.get(0))));
    check(stable, "the two members never split the 4 partitions between them");
    return out;
  }

  private void idempotent() throws Exception {
    Admin admin = admin();
    String t = prefix;
    admin.createTopics(List.of(new NewTopic(t, 1, (short) 1))).all().get();
    waitForTopic(admin, t, 1);
    Properties p = producerProps();
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
    p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "5");
    KafkaProducer<byte[], byte[]> producer = closing(new KafkaProducer<>(p));
    List<Object> acks = new ArrayList<>();
    for (int batch = 0; batch < 4; batch++) {
      List<Future<RecordMetadata>> fs = new ArrayList<>();
      for (int i = batch * 5; i < batch * 5 + 5; i++) {
        fs.add(producer.send(new ProducerRecord<>(t, 0, null, bytes("i" + i))));
      }
      producer.flush();
      for (Future<RecordMetadata> f : fs) {
        acks.add(f.get().offset());
      }
    }
    result.put("acks", acks);
    List<Map<String, Object>> read = readFrom(t, 0, 0L, 20, IsolationLevel.READ_UNCOMMITTED);
    List<Object> values = new ArrayList<>();
    for (Map<String, Object> r : read) {
      values.add(r.get("v"));
    }
    result.put("offsets", read.stream().map(r -> r.get("o")).toList());
    result.put("values", values);
    TopicPartition tp = new TopicPartition(t, 0);
    result.put("producers", attempt(() -> {
      DescribeProducersResult dp = admin.describeProducers(List.of(tp));
      List<Map<String, Object>> producers = new ArrayList<>();
      for (ProducerState s : dp.partitionResult(tp).get().activeProducers()) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("epoch", s.producerEpoch());
        m.put("lastSequence", s.lastSequence());
        producers.add(m);
      }
      return producers;
    }));
    check(read.size() == 20, "read back " + read.size() + " of 20");
  }

  private void deleteTopic() throws Exception {
    Admin admin = admin();
    String t = prefix;
    admin.createTopics(List.of(new NewTopic(t, 2, (short) 1))).all().get();
    waitForTopic(admin, t, 2);
    produceValues(t, 0, "d", 0, 1);
    result.put("listedBefore", mine(admin.listTopics().names().get()));
    result.put("delete", attempt(() -> admin.deleteTopics(List.of(t)).all().get()));
    boolean gone = waitFor(() -> {
      try {
        return !admin.listTopics().names().get().contains(t);
      } catch (Exception e) {
        return false;
      }
    }, WAIT);
    result.put("goneFromList", gone);
    result.put("describeAfter", attempt(() -> admin.describeTopics(List.of(t)).allTopicNames().get()));
    result.put("deleteAgain", attempt(() -> admin.deleteTopics(List.of(t)).all().get()));
    result.put("recreate", attempt(() -> retryWhile(() -> admin.createTopics(List.of(new NewTopic(t, 1, (short) 1))).all().get())));
    waitForTopic(admin, t, 1);
    TopicPartition tp = new TopicPartition(t, 0);
    result.put("recreatedLatest", listOffset(admin, tp, OffsetSpec.latest()));
  }

  private void configs() throws Exception {
    Admin admin = admin();
    String t = prefix;
    admin.createTopics(List.of(new NewTopic(t, 1, (short) 1).configs(Map.of("retention.ms", "86400000")))).all().get();
    waitForTopic(admin, t, 1);
    List<String> keys = List.of("cleanup.policy", "max.message.bytes", "retention.ms", "segment.bytes");
    result.put("initial", describeConfigs(admin, t, keys));
    ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, t);
    result.put("alter", attempt(() -> admin.incrementalAlterConfigs(Map.of(r, List.of(
        new AlterConfigOp(new ConfigEntry("retention.ms", "3600000"), AlterConfigOp.OpType.SET),
        new AlterConfigOp(new ConfigEntry("cleanup.policy", "compact"), AlterConfigOp.OpType.SET)))).all().get()));
    // A broker applies an accepted change through its metadata log, so a describe right after may
    // still see the old value (Kafka does): wait, bounded, until it shows, then report what is seen.
    settle(admin, t, "retention.ms", "3600000");
    result.put("afterAlter", describeConfigs(admin, t, keys));
    result.put("reset", attempt(() -> admin.incrementalAlterConfigs(Map.of(r, List.of(
        new AlterConfigOp(new ConfigEntry("retention.ms", ""), AlterConfigOp.OpType.DELETE)))).all().get()));
    settle(admin, t, "retention.ms", "604800000");
    result.put("afterReset", describeConfigs(admin, t, keys));
    result.put("invalidValue", attempt(() -> admin.incrementalAlterConfigs(Map.of(r, List.of(
        new AlterConfigOp(new ConfigEntry("retention.ms", "abc"), AlterConfigOp.OpType.SET)))).all().get()));
    result.put("unknownKey", attempt(() -> admin.incrementalAlterConfigs(Map.of(r, List.of(
        new AlterConfigOp(new ConfigEntry("no.such.config", "1"), AlterConfigOp.OpType.SET)))).all().get()));
    ConfigResource missing = new ConfigResource(ConfigResource.Type.TOPIC, prefix + "-missing");
    result.put("missingTopic", attempt(() -> admin.describeConfigs(List.of(missing)).all().get()));
  }

  private void deleteRecords() throws Exception {
    Admin admin = admin();
    String t = prefix;
    admin.createTopics(List.of(new NewTopic(t, 1, (short) 1))).all().get();
    waitForTopic(admin, t, 1);
    produceValues(t, 0, "r", 0, 10);
    TopicPartition tp = new TopicPartition(t, 0);
    result.put("deleteBefore4", attempt(() -> admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(4)))
        .lowWatermarks().get(tp).get().lowWatermark()));
    result.put("earliest", listOffset(admin, tp, OffsetSpec.earliest()));
    result.put("latest", listOffset(admin, tp, OffsetSpec.latest()));
    List<Map<String, Object>> read = readFrom(t, 0, null, 6, IsolationLevel.READ_UNCOMMITTED);
    result.put("readFromEarliest", read.stream().map(x -> x.get("o")).toList());
    result.put("deleteBeyondEnd", attempt(() -> admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(20)))
        .lowWatermarks().get(tp).get().lowWatermark()));
    result.put("deleteAll", attempt(() -> admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(-1)))
        .lowWatermarks().get(tp).get().lowWatermark()));
    result.put("earliestAfterAll", listOffset(admin, tp, OffsetSpec.earliest()));
  }

  /**
   * What Kafka 4's admin tools ask a one-node cluster, through the Admin calls they make: kafka-topics
   * --describe (describeTopics, DescribeTopicPartitions paged two partitions at a time), kafka-features
   * describe (describeFeatures), kafka-leader-election (electLeaders), kafka-reassign-partitions --list and
   * --execute (list/alterPartitionReassignments) and kafka-metadata-quorum describe --status
   * (describeMetadataQuorum).
   */
  private void adminSingleNode() throws Exception {
    Admin admin = admin();
    String t = prefix;
    admin.createTopics(List.of(new NewTopic(t, 3, (short) 1))).all().get();
    waitForTopic(admin, t, 3);
    TopicDescription d = admin.describeTopics(List.of(t), new DescribeTopicsOptions().partitionSizeLimitPerResponse(2)).allTopicNames().get().get(t);
    result.put("partitions", d.partitions().stream().map(p -> {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("partition", p.partition());
      m.put("leaderKnown", p.leader() != null);
      m.put("replicas", p.replicas().size());
      m.put("isr", p.isr().size());
      m.put("elr", p.elr() == null ? null : p.elr().size());
      m.put("lastKnownElr", p.lastKnownElr() == null ? null : p.lastKnownElr().size());
      return m;
    }).toList());
    FeatureMetadata f = admin.describeFeatures().featureMetadata().get();
    Map<String, Object> finalized = new TreeMap<>();
    f.finalizedFeatures().forEach((name, r) -> finalized.put(name, r.maxVersionLevel()));
    Map<String, Object> supported = new TreeMap<>();
    f.supportedFeatures().forEach((name, r) -> supported.put(name, r.minVersion() + "-" + r.maxVersion()));
    result.put("finalizedFeatures", finalized);
    result.put("supportedFeatures", supported);
    TopicPartition tp = new TopicPartition(t, 0);
    result.put("electPreferred", attempt(() -> admin.electLeaders(org.apache.kafka.common.ElectionType.PREFERRED, Set.of(tp)).partitions().get().get(tp)
        .map(e -> (Object) Map.of("error", err(e))).orElse("ok")));
    result.put("reassignmentsListed", attempt(() -> admin.listPartitionReassignments(Set.of(tp)).reassignments().get().size()));
    result.put("reassignToMissingBroker", attempt(() -> admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(List.of(99))))).all().get()));
    QuorumInfo q = admin.describeMetadataQuorum().quorumInfo().get();
    Map<String, Object> quorum = new LinkedHashMap<>();
    quorum.put("leaderIsVoter", q.voters().stream().anyMatch(v -> v.replicaId() == q.leaderId()));
    quorum.put("voters", q.voters().size());
    quorum.put("observers", q.observers().size());
    quorum.put("nodes", q.nodes().size());
    result.put("quorum", quorum);
  }

  private void groupsAdmin() throws Exception {
    Admin admin = admin();
    String t = prefix;
    String g = prefix + "-g";
    String busy = prefix + "-busy";
    admin.createTopics(List.of(new NewTopic(t, 1, (short) 1))).all().get();
    waitForTopic(admin, t, 1);
    produceValues(t, 0, "g", 0, 3);
    KafkaConsumer<byte[], byte[]> c = groupConsumer(g, "classic");
    c.subscribe(List.of(t));
    pollUntil(c, 3);
    c.commitSync();
    c.close();
    result.put("listed", listMyGroups(admin));
    result.put("described", describeGroup(admin, g));
    TopicPartition tp = new TopicPartition(t, 0);
    result.put("offsets", committedOffset(admin.listConsumerGroupOffsets(g).partitionsToOffsetAndMetadata().get(), tp));
    KafkaConsumer<byte[], byte[]> active = groupConsumer(busy, "classic");
    active.subscribe(List.of(t));
    waitFor(() -> {
      active.poll(Duration.ofMillis(100));
      return !active.assignment().isEmpty();
    }, WAIT);
    result.put("deleteActive", attempt(() -> admin.deleteConsumerGroups(List.of(busy)).all().get()));
    active.close();
    result.put("delete", attempt(() -> admin.deleteConsumerGroups(List.of(g)).all().get()));
    result.put("listedAfterDelete", listMyGroups(admin));
    result.put("describedAfterDelete", attempt(() -> describeGroup(admin, g)));
    result.put("deleteAgain", attempt(() -> admin.deleteConsumerGroups(List.of(g)).all().get()));
  }

  private void errMissingTopic() throws Exception {
    Admin admin = admin();
    String t = prefix + "-missing";
    Properties p = producerProps();
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "5000");
    KafkaProducer<byte[], byte[]> producer = closing(new KafkaProducer<>(p));
    result.put("produce", attempt(() -> producer.send(new ProducerRecord<>(t, bytes("x"))).get()));
    result.put("describe", attempt(() -> admin.describeTopics(List.of(t)).allTopicNames().get()));
    result.put("createdByProduce", admin.listTopics().names().get().contains(t));
  }

  private void errOffsetOutOfRange() throws Exception {
    Admin admin = admin();
    String t = prefix;
    admin.createTopics(List.of(new NewTopic(t, 1, (short) 1))).all().get();
    waitForTopic(admin, t, 1);
    produceValues(t, 0, "o", 0, 5);
    TopicPartition tp = new TopicPartition(t, 0);
    KafkaConsumer<byte[], byte[]> none = closing(consumer(null, "none", IsolationLevel.READ_UNCOMMITTED));
    none.assign(List.of(tp));
    none.seek(tp, 100);
    result.put("resetNone", attempt(() -> {
      long deadline = System.nanoTime() + WAIT.toNanos();
      while (System.nanoTime() < deadline) {
        if (!none.poll(Duration.ofMillis(200)).isEmpty()) {
          return "records";
        }
      }
      return "no error";
    }));
    KafkaConsumer<byte[], byte[]> earliest = closing(consumer(null, "earliest", IsolationLevel.READ_UNCOMMITTED));
    earliest.assign(List.of(tp));
    earliest.seek(tp, 100);
    result.put("resetEarliest", offsetsOf(pollUntil(earliest, 5)));
    KafkaConsumer<byte[], byte[]> latest = closing(consumer(null, "latest", IsolationLevel.READ_UNCOMMITTED));
    latest.assign(List.of(tp));
    latest.seek(tp, 100);
    waitFor(() -> {
      latest.poll(Duration.ofMillis(100));
      return latest.position(tp) != 100;
    }, WAIT);
    result.put("resetLatestPosition", latest.position(tp));
  }

  private void errOversize() throws Exception {
    Admin admin = admin();
    String t = prefix;
    admin.createTopics(List.of(new NewTopic(t, 1, (short) 1).configs(Map.of("max.message.bytes", "1024")))).all().get();
    waitForTopic(admin, t, 1);
    KafkaProducer<byte[], byte[]> producer = closing(new KafkaProducer<>(producerProps()));
    result.put("oversize", attempt(() -> producer.send(new ProducerRecord<>(t, 0, null, pattern(4000))).get().offset()));
    result.put("small", attempt(() -> producer.send(new ProducerRecord<>(t, 0, null, bytes("ok"))).get().offset()));
    result.put("read", readFrom(t, 0, 0L, 1, IsolationLevel.READ_UNCOMMITTED));
  }

  private void transactions() throws Exception {
    Admin admin = admin();
    String t = prefix;
    admin.createTopics(List.of(new NewTopic(t, 1, (short) 1))).all().get();
    waitForTopic(admin, t, 1);
    Properties p = producerProps();
    p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, prefix + "-tx");
    p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "20000");
    KafkaProducer<byte[], byte[]> producer = closing(new KafkaProducer<>(p));
    producer.initTransactions();
    producer.beginTransaction();
    for (String v : List.of("t0", "t1", "t2")) {
      producer.send(new ProducerRecord<>(t, 0, null, bytes(v)));
    }
    producer.commitTransaction();
    producer.beginTransaction();
    for (String v : List.of("a0", "a1")) {
      producer.send(new ProducerRecord<>(t, 0, null, bytes(v)));
    }
    producer.flush();
    producer.abortTransaction();
    producer.beginTransaction();
    producer.send(new ProducerRecord<>(t, 0, null, bytes("t3")));
    producer.commitTransaction();
    List<Map<String, Object>> committed = readFrom(t, 0, 0L, 4, IsolationLevel.READ_COMMITTED);
    List<Map<String, Object>> uncommitted = readFrom(t, 0, 0L, 6, IsolationLevel.READ_UNCOMMITTED);
    result.put("readCommitted", committed.stream().map(r -> r.get("o") + ":" + r.get("v")).toList());
    result.put("readUncommitted", uncommitted.stream().map(r -> r.get("o") + ":" + r.get("v")).toList());
    TopicPartition tp = new TopicPartition(t, 0);
    result.put("latest", listOffset(admin, tp, OffsetSpec.latest()));
  }

  // ---------------------------------------------------------------------------------------------- helpers

  private Admin admin() {
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
    p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
    return closing(Admin.create(p));
  }

  private Properties producerProps() {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, String.valueOf(4 * BIG));
    p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "20000");
    p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
    p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
    return p;
  }

  private KafkaConsumer<byte[], byte[]> consumer(String group, String reset, IsolationLevel isolation) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, reset);
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation.toString().toLowerCase());
    p.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
    p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
    if (group != null) {
      p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    }
    return new KafkaConsumer<>(p);
  }

  private KafkaConsumer<byte[], byte[]> groupConsumer(String group, String protocol) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
    p.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
    p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
    if (protocol.equals("classic")) {
      p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "10000");
      p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "500");
    }
    return closing(new KafkaConsumer<>(p));
  }

  private <T extends AutoCloseable> T closing(T c) {
    closeables.add(0, c);
    return c;
  }

  private static ProducerRecord<byte[], byte[]> standardRecord(String topic, int i) {
    RecordHeaders h = new RecordHeaders();
    return switch (i) {
      case 0 -> {
        h.add("h1", bytes("a"));
        yield new ProducerRecord<>(topic, 0, bytes("k0"), bytes("v0"), h);
      }
      case 1 -> new ProducerRecord<>(topic, 0, (byte[]) null, bytes("v1"), h);
      case 2 -> new ProducerRecord<>(topic, 0, bytes("k2"), null, h);
      case 3 -> {
        h.add("x", bytes("1"));
        h.add("x", bytes("2"));
        yield new ProducerRecord<>(topic, 0, bytes("k3"), new byte[0], h);
      }
      default -> {
        h.add("size", bytes(String.valueOf(BIG)));
        yield new ProducerRecord<>(topic, 0, bytes("big"), pattern(BIG), h);
      }
    };
  }

  private static boolean sameRecord(Map<String, Object> read, int i) {
    ProducerRecord<byte[], byte[]> want = standardRecord("x", i);
    List<Object> headers = new ArrayList<>();
    for (Header h : want.headers()) {
      headers.add(List.of(h.key(), repr(h.value())));
    }
    return java.util.Objects.equals(read.get("k"), repr(want.key()))
        && java.util.Objects.equals(read.get("v"), repr(want.value()))
        && read.get("h").equals(headers)
        && read.get("o").equals((long) i);
  }

  private void produceValues(String topic, int partition, String stem, int from, int to) throws Exception {
    KafkaProducer<byte[], byte[]> producer = closing(new KafkaProducer<>(producerProps()));
    List<Future<RecordMetadata>> fs = new ArrayList<>();
    for (int i = from; i < to; i++) {
      fs.add(producer.send(new ProducerRecord<>(topic, partition, null, bytes(stem + i))));
    }
    producer.flush();
    for (Future<RecordMetadata> f : fs) {
      f.get();
    }
  }

  private void produceOnePerPartition(String topic, int partitions) throws Exception {
    KafkaProducer<byte[], byte[]> producer = closing(new KafkaProducer<>(producerProps()));
    for (int p = 0; p < partitions; p++) {
      producer.send(new ProducerRecord<>(topic, p, null, bytes("p" + p))).get();
    }
  }

  /** Reads from one partition starting at offset (null: the earliest) until count records or the deadline. */
  private List<Map<String, Object>> readFrom(String topic, int partition, Long offset, int count, IsolationLevel isolation) {
    KafkaConsumer<byte[], byte[]> c = closing(consumer(null, "earliest", isolation));
    TopicPartition tp = new TopicPartition(topic, partition);
    c.assign(List.of(tp));
    if (offset == null) {
      c.seekToBeginning(List.of(tp));
    } else {
      c.seek(tp, offset);
    }
    List<Map<String, Object>> out = new ArrayList<>();
    for (ConsumerRecord<byte[], byte[]> r : pollUntil(c, count)) {
      out.add(recordRepr(r));
    }
    return out;
  }

  private static Map<String, Object> recordRepr(ConsumerRecord<byte[], byte[]> r) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("p", r.partition());
    m.put("o", r.offset());
    m.put("k", repr(r.key()));
    m.put("v", repr(r.value()));
    List<Object> headers = new ArrayList<>();
    for (Header h : r.headers()) {
      headers.add(List.of(h.key(), repr(h.value())));
    }
    m.put("h", headers);
    return m;
  }

  /** Polls until count records arrived or the deadline passed; returns what arrived (at most count). */
  private static List<ConsumerRecord<byte[], byte[]>> pollUntil(KafkaConsumer<byte[], byte[]> c, int count) {
    return pollUntil(c, count, WAIT);
  }

  private static List<ConsumerRecord<byte[], byte[]>> pollUntil(KafkaConsumer<byte[], byte[]> c, int count, Duration wait) {
    List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
    long deadline = System.nanoTime() + wait.toNanos();
    while (out.size() < count && System.nanoTime() < deadline) {
      ConsumerRecords<byte[], byte[]> rs = c.poll(Duration.ofMillis(200));
      for (ConsumerRecord<byte[], byte[]> r : rs) {
        out.add(r);
      }
    }
    return out.size() > count ? new ArrayList<>(out.subList(0, count)) : out;
  }

  private static List<Object> offsetsOf(List<ConsumerRecord<byte[], byte[]>> rs) {
    List<Object> out = new ArrayList<>();
    for (ConsumerRecord<byte[], byte[]> r : rs) {
      out.add(r.offset());
    }
    return out;
  }

  private static Object committedOffset(Map<TopicPartition, OffsetAndMetadata> m, TopicPartition tp) {
    OffsetAndMetadata o = m.get(tp);
    return o == null ? null : o.offset();
  }

  private static Object listOffset(Admin admin, TopicPartition tp, OffsetSpec spec) {
    return attempt(() -> {
      ListOffsetsResult.ListOffsetsResultInfo info = admin.listOffsets(Map.of(tp, spec)).partitionResult(tp).get();
      return info.offset(); // -1 when no record matches (a timestamp past the last record)
    });
  }

  private List<String> mine(Collection<String> names) {
    List<String> out = new ArrayList<>();
    for (String n : names) {
      if (n.startsWith(prefix)) {
        out.add(n);
      }
    }
    Collections.sort(out);
    return out;
  }

  private List<Object> listMyGroups(Admin admin) throws Exception {
    List<Object> out = new ArrayList<>();
    List<GroupListing> all = new ArrayList<>(admin.listGroups().all().get());
    all.sort((a, b) -> a.groupId().compareTo(b.groupId()));
    for (GroupListing l : all) {
      if (l.groupId().startsWith(prefix)) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("group", l.groupId());
        m.put("state", l.groupState().map(Object::toString).orElse(null));
        m.put("protocol", l.protocol());
        m.put("type", l.type().map(Object::toString).orElse(null));
        out.add(m);
      }
    }
    return out;
  }

  private static Map<String, Object> describeGroup(Admin admin, String g) throws Exception {
    ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(g)).all().get().get(g);
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("state", d.groupState().toString());
    m.put("members", d.members().size());
    m.put("assignor", d.partitionAssignor());
    m.put("type", d.type().toString());
    return m;
  }

  private static List<Object> describePartitions(TopicDescription d) {
    List<Object> out = new ArrayList<>();
    for (TopicPartitionInfo p : d.partitions()) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("partition", p.partition());
      m.put("leaderKnown", p.leader() != null && !p.leader().isEmpty());
      m.put("replicas", p.replicas().size());
      m.put("isr", p.isr().size());
      out.add(m);
    }
    return out;
  }

  private static Map<String, Object> describeConfigs(Admin admin, String topic, Collection<String> keys) throws Exception {
    ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, topic);
    Config c = admin.describeConfigs(List.of(r)).all().get().get(r);
    Map<String, Object> out = new TreeMap<>();
    for (String k : keys) {
      ConfigEntry e = c.get(k);
      if (e == null) {
        out.put(k, null);
        continue;
      }
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("value", e.value());
      m.put("source", e.source().toString());
      m.put("readOnly", e.isReadOnly());
      m.put("sensitive", e.isSensitive());
      out.put(k, m);
    }
    return out;
  }

  private static void settle(Admin admin, String topic, String key, String value) {
    waitFor(() -> {
      try {
        ConfigResource r = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        ConfigEntry e = admin.describeConfigs(List.of(r)).all().get().get(r).get(key);
        return e != null && value.equals(e.value());
      } catch (Exception e) {
        return false;
      }
    }, WAIT);
  }

  private static void waitForTopic(Admin admin, String topic, int partitions) {
    waitFor(() -> {
      try {
        TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
        return d.partitions().size() == partitions && d.partitions().stream().allMatch(p -> p.leader() != null);
      } catch (Exception e) {
        return false;
      }
    }, WAIT);
  }

  private static boolean waitFor(BooleanSupplier cond, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (cond.getAsBoolean()) {
        return true;
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
    return cond.getAsBoolean();
  }

  private interface Step {
    Object run() throws Exception;
  }

  /** Runs a step; its value, "ok" when it has none, or {"error": NAME} when it threw. */
  private static Object attempt(Step s) {
    try {
      Object v = s.run();
      return v == null || v instanceof Void ? "ok" : v;
    } catch (Throwable t) {
      return Map.of("error", err(t));
    }
  }

  /** Retries a step while the broker still reports the topic as being deleted (bounded). */
  private static Object retryWhile(Step s) throws Exception {
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (true) {
      try {
        return s.run();
      } catch (ExecutionException e) {
        String name = err(e);
        if (System.nanoTime() > deadline || !(name.equals("TOPIC_ALREADY_EXISTS") || name.equals("UNKNOWN_TOPIC_OR_PARTITION"))) {
          throw e;
        }
        Thread.sleep(200);
      }
    }
  }

  /** Kafka's name for an API error (Errors enum), else the exception's class name. */
  static String err(Throwable t) {
    Throwable c = t;
    while ((c instanceof ExecutionException || (c.getClass() == KafkaException.class)) && c.getCause() != null) {
      c = c.getCause();
    }
    if (c instanceof ApiException) {
      Errors e = Errors.forException(c);
      if (e != Errors.UNKNOWN_SERVER_ERROR || c.getClass() == org.apache.kafka.common.errors.UnknownServerException.class) {
        return e.name();
      }
    }
    return c.getClass().getSimpleName();
  }

  private static String firstLine(Throwable t) {
    String m = String.valueOf(t.getMessage());
    int nl = m.indexOf('\n');
    return nl < 0 ? m : m.substring(0, nl);
  }

  private void check(boolean ok, String what) {
    if (!ok) {
      violations.add(what);
    }
  }

  private static <T> Set<T> snapshot(Set<T> s) {
    synchronized (s) {
      return new TreeSet<>(s);
    }
  }

  static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** The suite's deterministic payload: byte i is i mod 251. */
  static byte[] pattern(int n) {
    byte[] b = new byte[n];
    for (int i = 0; i < n; i++) {
      b[i] = (byte) (i % 251);
    }
    return b;
  }

  /** null stays null; short printable ASCII stays text; anything else is "<len> bytes sha256:<16 hex>". */
  static Object repr(byte[] b) {
    if (b == null) {
      return null;
    }
    boolean printable = b.length <= 64;
    for (int i = 0; printable && i < b.length; i++) {
      printable = b[i] >= 0x20 && b[i] < 0x7f;
    }
    if (printable) {
      return new String(b, StandardCharsets.US_ASCII);
    }
    try {
      byte[] d = MessageDigest.getInstance("SHA-256").digest(b);
      StringBuilder sb = new StringBuilder();
      for (int i = 0; i < 8; i++) {
        sb.append(String.format("%02x", d[i]));
      }
      return b.length + " bytes sha256:" + sb;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** A small JSON writer for the result (kafka-clients brings no JSON library to the client classpath). */
  static final class Json {
    static String write(Object o) {
      StringBuilder sb = new StringBuilder();
      write(sb, o);
      return sb.toString();
    }

    private static void write(StringBuilder sb, Object o) {
      if (o == null) {
        sb.append("null");
      } else if (o instanceof String s) {
        sb.append('"');
        for (char ch : s.toCharArray()) {
          switch (ch) {
            case '"' -> sb.append("\\\"");
            case '\\' -> sb.append("\\\\");
            case '\n' -> sb.append("\\n");
            case '\r' -> sb.append("\\r");
            case '\t' -> sb.append("\\t");
            default -> {
              if (ch < 0x20) {
                sb.append(String.format("\\u%04x", (int) ch));
              } else {
                sb.append(ch);
              }
            }
          }
        }
        sb.append('"');
      } else if (o instanceof Number || o instanceof Boolean) {
        sb.append(o);
      } else if (o instanceof Map<?, ?> m) {
        sb.append('{');
        boolean first = true;
        for (Map.Entry<?, ?> e : m.entrySet()) {
          if (!first) {
            sb.append(',');
          }
          first = false;
          write(sb, String.valueOf(e.getKey()));
          sb.append(':');
          write(sb, e.getValue());
        }
        sb.append('}');
      } else if (o instanceof Collection<?> c) {
        sb.append('[');
        boolean first = true;
        for (Object x : c) {
          if (!first) {
            sb.append(',');
          }
          first = false;
          write(sb, x);
        }
        sb.append(']');
      } else {
        write(sb, o.toString());
      }
    }
  }
}
