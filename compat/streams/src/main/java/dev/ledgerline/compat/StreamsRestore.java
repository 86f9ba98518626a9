package dev.ledgerline.compat;

import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.apache.kafka.streams.state.Stores;

/**
 * A Kafka Streams keyed aggregation whose state must come back from its changelog: input records
 * (String key, String value = a whole number) are summed per key into the in-memory key-value store
 * {@code totals} (changelog {@code <app>-totals-changelog}, cleanup.policy=compact as Streams creates every
 * key-value store's changelog), and every updated total goes to the output topic (String key, Long total).
 * An in-memory store keeps nothing on disk, so every start restores it from the changelog, from the log
 * start offset to its end: after many updates over a few keys the changelog is what the broker's log
 * cleaner left of it.
 *
 * <p>The changelog's topic configs are set through Streams ({@code topic.} prefix, StreamsConfig.topicPrefix)
 * so that it rolls a segment every {@code segment.ms} and the cleaner compacts it while the application
 * runs: {@code topic.segment.ms}, {@code topic.min.cleanable.dirty.ratio=0.01}, {@code topic.delete.retention.ms}.
 *
 * <p>Prints JSON lines on stdout, for the test that runs it:
 * <ul>
 *   <li>{@code {"state":"REBALANCING","from":"CREATED"}} at each state transition;
 *   <li>{@code {"restore":"start","store":..,"topic":..,"partition":..,"from":..,"to":..}}, {@code "batch"} (the
 *       records of a restored batch) and {@code "end"} (with {@code "restored"}, the records restored), from
 *       the application's global StateRestoreListener;
 *   <li>{@code {"query":{key: total, ...}}}: the whole store, by interactive query, whenever it changed,
 *       once the application is RUNNING and the store queryable.
 * </ul>
 *
 * <p>Usage: {@code StreamsRestore <bootstrap> <application-id> <input-topic> <output-topic> <state-dir>
 * <segment.ms>}. Runs until SIGTERM (KafkaStreams.close() commits and leaves) or SIGKILL.
 */
public final class StreamsRestore {
  private static final int MAX_THREAD_REPLACEMENTS = 3;
  static final String STORE = "totals";

  public static void main(String[] args) throws InterruptedException {
    if (args.length != 6) {
      System.err.println("usage: StreamsRestore <bootstrap> <application-id> <input-topic> <output-topic> <state-dir> <segment.ms>");
      System.exit(2);
    }
    String input = args[2];
    String output = args[3];

    Properties props = new Properties();
    props.put(StreamsConfig.APPLICATION_ID_CONFIG, args[1]);
    props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
    props.put(StreamsConfig.STATE_DIR_CONFIG, args[4]);
    props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
    props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
    props.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 1);
    // No record cache: every update of a total is a changelog record, so the changelog holds many
    // records per key, most of them superseded: worth compacting.
    props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
    // The internal topics' configs (here only the changelog): a segment rolls every segment.ms (Kafka
    // rolls on the next append once the segment's first record is that old, LogSegment.shouldRoll), and
    // any sealed dirty segment is worth a cleaner pass (Kafka's min.cleanable.dirty.ratio may be 0).
    props.put(StreamsConfig.topicPrefix("segment.ms"), args[5]);
    props.put(StreamsConfig.topicPrefix("min.cleanable.dirty.ratio"), "0.01");
    props.put(StreamsConfig.topicPrefix("delete.retention.ms"), "86400000");
    props.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), 6000);
    props.put(StreamsConfig.consumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG), 1500);

    StreamsBuilder builder = new StreamsBuilder();
    builder
        .stream(input, Consumed.with(Serdes.String(), Serdes.String()))
        .groupByKey(Grouped.with(Serdes.String(), Serdes.String()))
        .aggregate(
            () -> 0L,
            (key, value, total) -> total + Long.parseLong(value.trim()),
            Materialized.<String, Long>as(Stores.inMemoryKeyValueStore(STORE)).withKeySerde(Serdes.String()).withValueSerde(Serdes.Long()))
        .toStream()
        .to(output, Produced.with(Serdes.String(), Serdes.Long()));

    KafkaStreams streams = new KafkaStreams(builder.build(), props);
    streams.setGlobalStateRestoreListener(new StateRestoreListener() {
      @Override
      public void onRestoreStart(TopicPartition tp, String store, long from, long to) {
        print("{\"restore\":\"start\",\"store\":\"" + store + "\",\"topic\":\"" + tp.topic() + "\",\"partition\":" + tp.partition() + ",\"from\":" + from + ",\"to\":" + to + "}");
      }

      @Override
      public void onBatchRestored(TopicPartition tp, String store, long batchEndOffset, long numRestored) {
        print("{\"restore\":\"batch\",\"store\":\"" + store + "\",\"partition\":" + tp.partition() + ",\"endOffset\":" + batchEndOffset + ",\"records\":" + numRestored + "}");
      }

      @Override
      public void onRestoreEnd(TopicPartition tp, String store, long totalRestored) {
        print("{\"restore\":\"end\",\"store\":\"" + store + "\",\"topic\":\"" + tp.topic() + "\",\"partition\":" + tp.partition() + ",\"restored\":" + totalRestored + "}");
      }
    });
    AtomicInteger replaced = new AtomicInteger();
    streams.setUncaughtExceptionHandler(e -> {
      System.err.println("stream thread died: " + e);
      for (Throwable c = e.getCause(); c != null; c = c.getCause()) System.err.println("  caused by: " + c);
      if (replaced.incrementAndGet() > MAX_THREAD_REPLACEMENTS) return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
      return StreamThreadExceptionResponse.REPLACE_THREAD;
    });
    CountDownLatch done = new CountDownLatch(1);
    streams.setStateListener((now, before) -> {
      print("{\"state\":\"" + now + "\",\"from\":\"" + before + "\"}");
      if (now == KafkaStreams.State.ERROR || now == KafkaStreams.State.NOT_RUNNING) done.countDown();
    });
    Runtime.getRuntime().addShutdownHook(new Thread(() -> streams.close(Duration.ofSeconds(10))));
    streams.start();

    // The interactive query: the store's contents whenever they changed. Stores of tasks still restoring
    // are not queryable (InvalidStateStoreException), so what is printed is the restored store.
    Thread query = new Thread(() -> {
      String last = null;
      while (done.getCount() > 0) {
        if (streams.state() == KafkaStreams.State.RUNNING) {
          try {
            String now = dump(streams.store(StoreQueryParameters.fromNameAndType(STORE, QueryableStoreTypes.<String, Long>keyValueStore())));
            if (!now.equals(last)) print("{\"query\":" + now + "}");
            last = now;
          } catch (RuntimeException notYet) {
            // rebalancing or restoring: asked again shortly
          }
        }
        try {
          Thread.sleep(250);
        } catch (InterruptedException e) {
          return;
        }
      }
    }, "store-query");
    query.setDaemon(true);
    query.start();

    done.await();
    KafkaStreams.State last = streams.state();
    System.err.println("streams stopped in state " + last);
    if (last == KafkaStreams.State.ERROR) {
      streams.close(Duration.ofSeconds(5));
      System.exit(1);
    }
  }

  private static String dump(ReadOnlyKeyValueStore<String, Long> store) {
    Map<String, Long> all = new TreeMap<>();
    try (KeyValueIterator<String, Long> it = store.all()) {
      while (it.hasNext()) {
        KeyValue<String, Long> kv = it.next();
        all.put(kv.key, kv.value);
      }
    }
    StringBuilder sb = new StringBuilder("{");
    for (Map.Entry<String, Long> e : all.entrySet()) {
      if (sb.length() > 1) sb.append(',');
      sb.append('"').append(e.getKey()).append("\":").append(e.getValue());
    }
    return sb.append('}').toString();
  }

  private static synchronized void print(String line) {
    System.out.println(line);
    System.out.flush();
  }
}
