package dev.ledgerline.e2e;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * What end-to-end encryption costs a Java application, through one running Ledgerline broker: the Java
 * counterpart of bench/e2e.ts (same records, same alternating pairs, same table).
 *
 * <pre>
 *   producer  KafkaProducer, acks=all, no compression, default batching, async send of every record then
 *             flush(), every callback checked; ByteArraySerializer against the E2eSerializer configuration
 *             (key and value serializer, inner ByteArraySerializer, one X25519 recipient, default rotation).
 *   consumer  KafkaConsumer, all partitions assigned, seekToBeginning, no group, polled until every record
 *             arrived, timed from the first record to the last; ByteArrayDeserializer against the
 *             E2eDeserializer configuration (with E2eConsumerInterceptor, on.failure FAIL); every record
 *             is checked to come back as produced (no envelope, no failure marker).
 *   codec     ns per RecordEncryptor.encrypt / RecordDecryptor.decrypt of one record in a tight loop, after
 *             warming the JIT, next to bare AES-256-GCM of 1 KiB for scale.
 * </pre>
 * Records: 1 KiB values, key "key-(i mod 1000)", one header trace = "t(i)"; 4 partitions per topic, fresh
 * topics per pair (the encrypted ones with ledgerline.encryption.required=true). Each pair runs the encrypted
 * side first in odd pairs and the plaintext side first in even ones; the table gives the medians, the median
 * ratio and every pair's ratio, since the machine is shared and noisy. An untimed warm-up round (both sides,
 * up to 20,000 records) runs before pair 1 so that no pair measures the JIT compiling. Progress goes to stderr, the table to
 * stdout.
 *
 * <pre>
 *   java -cp $(cat compat/java-e2e/target/classpath.txt):compat/java-e2e/target/classes dev.ledgerline.e2e.Bench \
 *     --bootstrap HOST:PORT --keys DIR --recipient ID [--records 100000] [--pairs 3]
 * </pre>
 */
public final class Bench {
    private static final int PARTITIONS = 4;
    private static final int RECORD_BYTES = 1024;
    private static final String REQUIRED = "ledgerline.encryption.required";
    private static final long CONSUME_TIMEOUT_MS = 180_000;
    private static final int WARMUP_RECORDS = 20_000;

    private Bench() {}

    /** The records of every measure: built once, outside the timed parts. */
    private static final class Records {
        final byte[][] keys;
        final byte[][] values;
        final byte[][] traces;

        Records(int n) {
            keys = new byte[n][];
            values = new byte[n][];
            traces = new byte[n][];
            for (int i = 0; i < n; i++) {
                byte[] v = new byte[RECORD_BYTES];
                Arrays.fill(v, (byte) (97 + (i % 26)));
                byte[] head = prefix(i);
                System.arraycopy(head, 0, v, 0, head.length);
                values[i] = v;
                keys[i] = utf8("key-" + (i % 1000));
                traces[i] = utf8("t" + i);
            }
        }

        int size() {
            return values.length;
        }
    }

    private static byte[] prefix(int i) {
        return utf8("record " + i + " ");
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> o = options(args);
        String bootstrap = need(o, "bootstrap");
        Path keysDir = Path.of(need(o, "keys"));
        String recipient = need(o, "recipient");
        int count = Integer.parseInt(o.getOrDefault("records", "100000"));
        int pairs = Integer.parseInt(o.getOrDefault("pairs", "3"));
        if (count <= 0 || pairs <= 0) usage("--records and --pairs must be positive");

        Records records = new Records(count);
        String run = Long.toString(System.currentTimeMillis() % 1_000_000_000L, 36) + Integer.toString(ThreadLocalRandom.current().nextInt(1296), 36);

        List<Double> encProduce = new ArrayList<>();
        List<Double> plainProduce = new ArrayList<>();
        List<Double> encConsume = new ArrayList<>();
        List<Double> plainConsume = new ArrayList<>();

        Properties ap = new Properties();
        ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(ap)) {
            // One untimed round on both sides first, so that the JIT has compiled the client's and the
            // library's paths (the crypto intrinsics included) before pair 1: a long-running application's state.
            Records warm = new Records(Math.min(count, WARMUP_RECORDS));
            log("warm-up (untimed), " + warm.size() + " records per side");
            String warmEnc = "jbench-warm-enc-" + run;
            String warmPlain = "jbench-warm-plain-" + run;
            admin.createTopics(List.of(new NewTopic(warmEnc, PARTITIONS, (short) 1).configs(Map.of(REQUIRED, "true")), new NewTopic(warmPlain, PARTITIONS, (short) 1))).all().get();
            produce(bootstrap, warmEnc, warm, encryptingProducer(keysDir, recipient));
            produce(bootstrap, warmPlain, warm, plainProducer());
            consume(bootstrap, warmEnc, warm, decryptingConsumer(keysDir));
            consume(bootstrap, warmPlain, warm, plainConsumer());
            admin.deleteTopics(List.of(warmEnc, warmPlain)).all().get();

            for (int i = 0; i < pairs; i++) {
                log("pair " + (i + 1) + " of " + pairs);
                String encTopic = "jbench-enc-" + run + "-" + i;
                String plainTopic = "jbench-plain-" + run + "-" + i;
                List<NewTopic> topics = List.of(
                    new NewTopic(encTopic, PARTITIONS, (short) 1).configs(Map.of(REQUIRED, "true")),
                    new NewTopic(plainTopic, PARTITIONS, (short) 1));
                admin.createTopics(topics).all().get();
                boolean[] order = i % 2 == 0 ? new boolean[] {true, false} : new boolean[] {false, true};
                for (boolean enc : order) {
                    double rate = produce(bootstrap, enc ? encTopic : plainTopic, records, enc ? encryptingProducer(keysDir, recipient) : plainProducer());
                    log(String.format(Locale.ROOT, "  produce %-9s %9.0f records/s", enc ? "encrypted" : "plaintext", rate));
                    (enc ? encProduce : plainProduce).add(rate);
                }
                for (boolean enc : order) {
                    double rate = consume(bootstrap, enc ? encTopic : plainTopic, records, enc ? decryptingConsumer(keysDir) : plainConsumer());
                    log(String.format(Locale.ROOT, "  consume %-9s %9.0f records/s", enc ? "encrypted" : "plaintext", rate));
                    (enc ? encConsume : plainConsume).add(rate);
                }
            }
        }

        log("codec loops");
        PemDirectoryKeyReader keys = new PemDirectoryKeyReader(keysDir);
        double[] codec = codecLoops(keys, recipient, records);

        System.out.println();
        System.out.println(String.format(Locale.ROOT, "End-to-end encryption (Java %s, kafka-clients), %d records of %d B, %d partitions, acks=all, default batching, %d alternating pairs",
            System.getProperty("java.version"), count, RECORD_BYTES, PARTITIONS, pairs));
        System.out.println(pad("", 44) + " " + lpad("with", 9) + " " + lpad("without", 9) + " " + pad("", 10) + " ratio");
        System.out.println(ratioLine("KafkaProducer: E2eSerializer vs ByteArray", "records/s", encProduce, plainProduce));
        System.out.println(ratioLine("KafkaConsumer: E2eDeserializer vs ByteArray", "records/s", encConsume, plainConsume));
        System.out.println();
        System.out.println(String.format(Locale.ROOT, "codec, one %d B record (key, 1 header), one X25519 recipient, one thread:", RECORD_BYTES));
        System.out.println(String.format(Locale.ROOT, "  %-42s %9.0f ns", "RecordEncryptor.encrypt", codec[0]));
        System.out.println(String.format(Locale.ROOT, "  %-42s %9.0f ns", "RecordDecryptor.decrypt", codec[1]));
        System.out.println(String.format(Locale.ROOT, "  %-42s %9.0f ns", "bare AES-256-GCM encrypt of 1 KiB (JDK)", codec[2]));
    }

    // ---- producer ----

    private static Properties producerBase(String bootstrap) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "none");
        return p;
    }

    private static Properties plainProducer() {
        Properties p = new Properties();
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        return p;
    }

    /** compat/java-e2e/README.md, "Configuration": configuration only, the application's code unchanged. */
    private static Properties encryptingProducer(Path keysDir, String recipient) {
        Properties p = new Properties();
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, E2eSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, E2eSerializer.class.getName());
        p.put(E2eConfig.KEY_SERIALIZER_INNER, ByteArraySerializer.class.getName());
        p.put(E2eConfig.VALUE_SERIALIZER_INNER, ByteArraySerializer.class.getName());
        p.put(E2eConfig.KEYS_DIR, keysDir.toString());
        p.put(E2eConfig.KEYS_ENV, "false");
        p.put(E2eConfig.RECIPIENTS, recipient);
        return p;
    }

    /** Sends every record asynchronously, then flush(); records/s from the first send to the end of flush(). */
    private static double produce(String bootstrap, String topic, Records records, Properties serializers) throws Exception {
        Properties p = producerBase(bootstrap);
        p.putAll(serializers);
        int n = records.size();
        AtomicLong acked = new AtomicLong();
        AtomicReference<Exception> failure = new AtomicReference<>();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            // Metadata first, so the timed part is sending alone.
            List<PartitionInfo> parts = producer.partitionsFor(topic);
            if (parts.size() != PARTITIONS) throw new IllegalStateException(topic + " has " + parts.size() + " partitions, expected " + PARTITIONS);
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(topic, records.keys[i], records.values[i]);
                r.headers().add("trace", records.traces[i]);
                producer.send(r, (md, e) -> {
                    if (e != null) failure.compareAndSet(null, e);
                    else acked.incrementAndGet();
                });
            }
            producer.flush();
            long t1 = System.nanoTime();
            if (failure.get() != null) throw new IllegalStateException("produce to " + topic + " failed: " + failure.get(), failure.get());
            if (acked.get() != n) throw new IllegalStateException("produce to " + topic + ": " + acked.get() + " of " + n + " records acknowledged");
            return n / ((t1 - t0) / 1e9);
        }
    }

    // ---- consumer ----

    private static Properties consumerBase(String bootstrap) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        return p;
    }

    private static Properties plainConsumer() {
        Properties p = new Properties();
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        return p;
    }

    /** compat/java-e2e/README.md, "Configuration" (the consumer example, without a group). */
    private static Properties decryptingConsumer(Path keysDir) {
        Properties p = new Properties();
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, E2eDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, E2eDeserializer.class.getName());
        p.put(E2eConfig.KEY_DESERIALIZER_INNER, ByteArrayDeserializer.class.getName());
        p.put(E2eConfig.VALUE_DESERIALIZER_INNER, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.INTERCEPTOR_CLASSES_CONFIG, E2eConsumerInterceptor.class.getName());
        p.put(E2eConfig.KEYS_DIR, keysDir.toString());
        p.put(E2eConfig.KEYS_ENV, "false");
        p.put(E2eConfig.ON_FAILURE, "FAIL");
        return p;
    }

    /**
     * Reads every record of {@code topic} from the beginning; records/s from the poll that returned the first
     * record to the one that returned the last (the records after the first poll's). Each record must be one that was produced, as produced: its key,
     * its trace header alone, and a value of 1 KiB starting with "record (i) " where t(i) is its trace.
     */
    private static double consume(String bootstrap, String topic, Records records, Properties deserializers) {
        Properties p = consumerBase(bootstrap);
        p.putAll(deserializers);
        int n = records.size();
        boolean[] seen = new boolean[n];
        int got = 0;
        int firstBatch = 0;
        long first = 0;
        long last = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            List<TopicPartition> tps = new ArrayList<>();
            for (PartitionInfo pi : consumer.partitionsFor(topic)) tps.add(new TopicPartition(topic, pi.partition()));
            if (tps.size() != PARTITIONS) throw new IllegalStateException(topic + " has " + tps.size() + " partitions, expected " + PARTITIONS);
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            long deadline = System.currentTimeMillis() + CONSUME_TIMEOUT_MS;
            while (got < n) {
                if (System.currentTimeMillis() > deadline) throw new IllegalStateException("consumed " + got + " of " + n + " records of " + topic + " before the deadline");
                ConsumerRecords<byte[], byte[]> batch = consumer.poll(Duration.ofMillis(500));
                if (batch.isEmpty()) continue;
                long now = System.nanoTime();
                if (got == 0) {
                    first = now;
                    firstBatch = batch.count();
                }
                for (ConsumerRecord<byte[], byte[]> r : batch) {
                    int i = check(topic, r, records);
                    if (seen[i]) throw new IllegalStateException(topic + ": record " + i + " delivered twice");
                    seen[i] = true;
                    got++;
                }
                last = System.nanoTime();
            }
            // Nothing beyond the records produced.
            if (!consumer.poll(Duration.ofMillis(200)).isEmpty()) throw new IllegalStateException(topic + " holds more than " + n + " records");
        }
        if (got != n) throw new IllegalStateException("consumed " + got + " records of " + topic + ", expected " + n);
        // The records the first poll returned were fetched and deserialized before the clock started: the rate is
        // of the ones after them. Every record in the first poll: nothing to time beyond it, so that poll's check.
        int timed = n - firstBatch;
        return (timed == 0 ? n : timed) / (Math.max(1, last - first) / 1e9);
    }

    /** The index of a delivered record after checking it came back as it was produced; throws otherwise. */
    private static int check(String topic, ConsumerRecord<byte[], byte[]> r, Records records) {
        Header trace = null;
        for (Header h : r.headers()) {
            if (h.key().equals(E2eConfig.FAILED_HEADER_NAME)) {
                throw new IllegalStateException(topic + "-" + r.partition() + "@" + r.offset() + " not decrypted: " + new String(h.value(), StandardCharsets.UTF_8));
            }
            if (!h.key().equals("trace") || trace != null) throw new IllegalStateException(topic + "-" + r.partition() + "@" + r.offset() + ": unexpected header " + h.key());
            trace = h;
        }
        if (trace == null || trace.value() == null || trace.value().length < 2 || trace.value()[0] != 't') {
            throw new IllegalStateException(topic + "-" + r.partition() + "@" + r.offset() + ": no trace header");
        }
        int i = Integer.parseInt(new String(trace.value(), 1, trace.value().length - 1, StandardCharsets.US_ASCII));
        if (i < 0 || i >= records.size()) throw new IllegalStateException(topic + ": trace t" + i + " was not produced");
        byte[] v = r.value();
        byte[] head = prefix(i);
        if (v == null || v.length != RECORD_BYTES || !Arrays.equals(v, 0, head.length, head, 0, head.length)) {
            throw new IllegalStateException(topic + "-" + r.partition() + "@" + r.offset() + ": value of record " + i + " is not what was produced");
        }
        if (!Arrays.equals(r.key(), records.keys[i])) throw new IllegalStateException(topic + "-" + r.partition() + "@" + r.offset() + ": key of record " + i + " differs");
        return i;
    }

    // ---- codec loops ----

    /** ns per encrypt, per decrypt (RecordEncryptor / RecordDecryptor), and per bare AES-256-GCM of 1 KiB. */
    private static double[] codecLoops(KeyReader keys, String recipient, Records records) throws Exception {
        int distinct = Math.min(1000, records.size());
        E2eRecord[] plain = new E2eRecord[distinct];
        for (int i = 0; i < distinct; i++) {
            plain[i] = new E2eRecord(records.keys[i], records.values[i], List.of(new Envelope.Header("trace", records.traces[i])));
        }
        RecordEncryptor enc = new RecordEncryptor(new RecordEncryptor.Options(keys, List.of(recipient)));
        RecordDecryptor dec = new RecordDecryptor(keys);
        String topic = "bench";
        E2eRecord[] sealed = new E2eRecord[distinct];
        for (int i = 0; i < distinct; i++) sealed[i] = enc.encrypt(topic, plain[i]);

        int iterations = 40_000;
        long sink = 0;
        // Warm the JIT on all three loops before timing any of them.
        for (int round = 0; round < 2; round++) {
            for (int i = 0; i < 20_000; i++) {
                sink += enc.encrypt(topic, plain[i % distinct]).value.length;
                sink += dec.decrypt(topic, sealed[i % distinct]).record.value.length;
            }
        }
        javax.crypto.spec.SecretKeySpec aesKey = new javax.crypto.spec.SecretKeySpec(new byte[32], "AES");
        javax.crypto.Cipher gcm = javax.crypto.Cipher.getInstance("AES/GCM/NoPadding");
        byte[] nonce = new byte[12];
        byte[] value = records.values[0];
        for (int i = 0; i < 40_000; i++) sink += aesOnce(gcm, aesKey, nonce, i, value);

        double[] encNs = new double[5];
        double[] decNs = new double[5];
        double[] aesNs = new double[5];
        for (int round = 0; round < 5; round++) {
            long t0 = System.nanoTime();
            for (int i = 0; i < iterations; i++) sink += enc.encrypt(topic, plain[i % distinct]).value.length;
            long t1 = System.nanoTime();
            for (int i = 0; i < iterations; i++) {
                RecordDecryptor.Result res = dec.decrypt(topic, sealed[i % distinct]);
                if (res.status != RecordDecryptor.Status.DECRYPTED) throw new IllegalStateException("codec loop: record not decrypted");
                sink += res.record.value.length;
            }
            long t2 = System.nanoTime();
            for (int i = 0; i < iterations; i++) sink += aesOnce(gcm, aesKey, nonce, i, value);
            long t3 = System.nanoTime();
            encNs[round] = (t1 - t0) / (double) iterations;
            decNs[round] = (t2 - t1) / (double) iterations;
            aesNs[round] = (t3 - t2) / (double) iterations;
        }
        if (sink == 42) System.err.println(); // keeps the loops' results alive
        return new double[] {median(encNs), median(decNs), median(aesNs)};
    }

    private static int aesOnce(javax.crypto.Cipher gcm, javax.crypto.spec.SecretKeySpec key, byte[] nonce, int i, byte[] value) throws Exception {
        nonce[0] = (byte) i;
        nonce[1] = (byte) (i >>> 8);
        nonce[2] = (byte) (i >>> 16);
        nonce[3] = (byte) (i >>> 24);
        gcm.init(javax.crypto.Cipher.ENCRYPT_MODE, key, new javax.crypto.spec.GCMParameterSpec(128, nonce));
        return gcm.doFinal(value).length;
    }

    // ---- table ----

    private static double median(double[] xs) {
        double[] s = xs.clone();
        Arrays.sort(s);
        int mid = s.length >> 1;
        return s.length % 2 == 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
    }

    private static double median(List<Double> xs) {
        double[] a = new double[xs.size()];
        for (int i = 0; i < a.length; i++) a[i] = xs.get(i);
        return median(a);
    }

    private static String ratioLine(String label, String unit, List<Double> enc, List<Double> plain) {
        double[] pairs = new double[enc.size()];
        StringBuilder each = new StringBuilder();
        for (int i = 0; i < pairs.length; i++) {
            pairs[i] = enc.get(i) / plain.get(i);
            if (i > 0) each.append(", ");
            each.append(String.format(Locale.ROOT, "%.2f", pairs[i]));
        }
        return pad(label, 44) + " " + lpad(String.format(Locale.ROOT, "%.0f", median(enc)), 9) + " " + lpad(String.format(Locale.ROOT, "%.0f", median(plain)), 9)
            + " " + pad(unit, 10) + " " + lpad(String.format(Locale.ROOT, "%.2f", median(pairs)), 5) + "  (pairs " + each + ")";
    }

    private static String pad(String s, int width) {
        return s.length() >= width ? s : s + " ".repeat(width - s.length());
    }

    private static String lpad(String s, int width) {
        return s.length() >= width ? s : " ".repeat(width - s.length()) + s;
    }

    // ---- arguments ----

    private static void log(String line) {
        System.err.println(line);
    }

    private static void usage(String why) {
        System.err.println("bench: " + why);
        System.err.println("usage: Bench --bootstrap HOST:PORT --keys DIR --recipient ID [--records 100000] [--pairs 3]");
        System.exit(1);
    }

    private static Map<String, String> options(String[] args) {
        Map<String, String> o = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("--") || i + 1 >= args.length) usage("unexpected argument " + a);
            String name = a.substring(2);
            if (!List.of("bootstrap", "keys", "recipient", "records", "pairs").contains(name)) usage("unknown option " + a);
            o.put(name, args[++i]);
        }
        return o;
    }

    private static String need(Map<String, String> o, String name) {
        String v = o.get(name);
        if (v == null) usage("--" + name + " is required");
        return v;
    }
}
