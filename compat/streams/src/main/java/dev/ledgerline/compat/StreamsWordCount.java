package dev.ledgerline.compat;

import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * A Kafka Streams word count under exactly-once (processing.guarantee=exactly_once_v2, KIP-447):
 * input lines → words (flatMapValues) → re-keyed by word (groupBy, through the repartition topic
 * {@code <app>-words-repartition}) → counted in the state store {@code counts} (changelog
 * {@code <app>-counts-changelog}) → every updated count to the output topic (String word, Long count).
 * Each commit (every 100 ms) is one transaction of the thread's producer covering the repartition, changelog
 * and output records and the input offsets, so a crash anywhere leaves each word's last committed count
 * exact.
 *
 * <p>Usage: {@code StreamsWordCount <bootstrap> <application-id> <input-topic> <output-topic> <state-dir>}.
 * Runs until killed (SIGTERM closes it cleanly). Prints its state transitions on stdout; Streams' own
 * warnings and errors go to stderr. A stream thread that dies is replaced up to three times; after that,
 * or when the client reaches ERROR, the process exits with status 1, so a broker that cannot serve
 * transactions ends the program instead of leaving it retrying.
 */
public final class StreamsWordCount {
  private static final int MAX_THREAD_REPLACEMENTS = 3;

  public static void main(String[] args) throws InterruptedException {
    if (args.length != 5) {
      System.err.println("usage: StreamsWordCount <bootstrap> <application-id> <input-topic> <output-topic> <state-dir>");
      System.exit(2);
    }
    String bootstrap = args[0];
    String applicationId = args[1];
    String input = args[2];
    String output = args[3];
    String stateDir = args[4];

    Properties props = new Properties();
    props.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
    props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
    props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir);
    props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
    props.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 1);
    // No record cache: every count update goes to the changelog and the output as it happens, not only at
    // the commit's flush, so a crash leaves records of the open transaction in every topic, to be aborted.
    props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
    // A killed instance's member is dropped by the group coordinator after its session timeout; Kafka's
    // smallest allowed one (group.min.session.timeout.ms) keeps each restart's rebalance short.
    props.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), 6000);
    props.put(StreamsConfig.consumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG), 1500);

    StreamsBuilder builder = new StreamsBuilder();
    builder
        .stream(input, Consumed.with(Serdes.String(), Serdes.String()))
        .flatMapValues(line -> Arrays.asList(line.toLowerCase(Locale.ROOT).split("\\W+")))
        .filter((key, word) -> !word.isEmpty())
        .groupBy((key, word) -> word, Grouped.with("words", Serdes.String(), Serdes.String()))
        .count(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("counts"))
        .toStream()
        .to(output, Produced.with(Serdes.String(), Serdes.Long()));

    KafkaStreams streams = new KafkaStreams(builder.build(), props);
    AtomicInteger replaced = new AtomicInteger();
    streams.setUncaughtExceptionHandler(e -> {
      System.err.println("stream thread died: " + e);
      for (Throwable c = e.getCause(); c != null; c = c.getCause()) System.err.println("  caused by: " + c);
      if (replaced.incrementAndGet() > MAX_THREAD_REPLACEMENTS) return StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
      return StreamThreadExceptionResponse.REPLACE_THREAD;
    });
    CountDownLatch done = new CountDownLatch(1);
    streams.setStateListener((now, before) -> {
      System.out.println("state " + before + " -> " + now);
      System.out.flush();
      if (now == KafkaStreams.State.ERROR || now == KafkaStreams.State.NOT_RUNNING) done.countDown();
    });
    Runtime.getRuntime().addShutdownHook(new Thread(() -> streams.close(Duration.ofSeconds(10))));
    streams.start();
    done.await();
    KafkaStreams.State last = streams.state();
    System.err.println("streams stopped in state " + last);
    if (last == KafkaStreams.State.ERROR) {
      // close() from here, not from the listener (it would wait on the thread calling it).
      streams.close(Duration.ofSeconds(5));
      System.exit(1);
    }
  }
}
