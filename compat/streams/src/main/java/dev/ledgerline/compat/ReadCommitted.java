package dev.ledgerline.compat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.LongDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Reads a topic of (String word, Long count) records from its beginning to its end and prints, as one JSON
 * line, the number of records read, how many of them were not their word's previous count plus one
 * (a count written twice, or one missing, in a word count without a record cache), the first such record,
 * and the last count of each word:
 * {@code {"records":N,"outOfSequence":M,"firstOutOfSequence":"word: 5 after 7","counts":{...}}}.
 * With {@code read_committed} (Kafka's isolation.level) the end is the last stable offset and records of
 * aborted transactions are skipped, as every Kafka consumer of a transactional output does.
 *
 * <p>Usage: {@code ReadCommitted <bootstrap> <topic> <read_committed|read_uncommitted>}. Gives up with
 * status 1 after 60 s without reaching the end.
 */
public final class ReadCommitted {
  public static void main(String[] args) {
    if (args.length != 3) {
      System.err.println("usage: ReadCommitted <bootstrap> <topic> <read_committed|read_uncommitted>");
      System.exit(2);
    }
    Properties props = new Properties();
    props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, args[2].toLowerCase(Locale.ROOT));
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5000);
    long deadline = System.currentTimeMillis() + 60_000;
    Map<String, Long> counts = new TreeMap<>();
    long records = 0;
    long outOfSequence = 0;
    String firstOutOfSequence = "";
    try (KafkaConsumer<String, Long> consumer = new KafkaConsumer<>(props, new StringDeserializer(), new LongDeserializer())) {
      List<TopicPartition> partitions = new ArrayList<>();
      for (PartitionInfo p : consumer.partitionsFor(args[1], Duration.ofSeconds(30))) partitions.add(new TopicPartition(p.topic(), p.partition()));
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      // For read_committed the end offsets are the last stable offsets.
      Map<TopicPartition, Long> end = consumer.endOffsets(partitions, Duration.ofSeconds(30));
      while (partitions.stream().anyMatch(tp -> consumer.position(tp) < end.get(tp))) {
        if (System.currentTimeMillis() > deadline) {
          System.err.println("did not reach the end offsets " + end + " within 60 s");
          System.exit(1);
        }
        for (ConsumerRecord<String, Long> r : consumer.poll(Duration.ofMillis(500))) {
          // A word is its record's key, so all its counts are in one partition, in the order written.
          long previous = counts.getOrDefault(r.key(), 0L);
          if (r.value() != previous + 1 && outOfSequence++ == 0) firstOutOfSequence = r.key() + ": " + r.value() + " after " + previous;
          counts.put(r.key(), r.value());
          records++;
        }
      }
    }
    StringBuilder out = new StringBuilder("{\"records\":").append(records);
    out.append(",\"outOfSequence\":").append(outOfSequence).append(",\"firstOutOfSequence\":\"").append(firstOutOfSequence).append("\"");
    out.append(",\"counts\":{");
    boolean first = true;
    for (Map.Entry<String, Long> e : counts.entrySet()) {
      if (!first) out.append(',');
      first = false;
      out.append('"').append(e.getKey()).append("\":").append(e.getValue());
    }
    System.out.println(out.append("}}"));
  }
}
