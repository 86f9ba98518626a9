package dev.ledgerline.e2e;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RecordDeserializationException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The Java e2e tool of the cross-language test (contract: same arguments and output in every language):
 *
 * <pre>
 *   vectors DIR
 *   produce --bootstrap HOST:PORT --topic T --keys DIR --recipients ID[,ID...] --count N --tag TAG
 *           [--pseudonym ID] [--seal-headers H[,H...]] [--rotate-records M] [--plaintext]
 *   consume --bootstrap HOST:PORT --topic T --keys DIR --count N [--on-failure FAIL|DISCARD|CONSUME] [--timeout-ms 60000]
 * </pre>
 * The producer and consumer are plain KafkaProducer / KafkaConsumer around ByteArraySerializer /
 * ByteArrayDeserializer, turned end-to-end encrypting by their configuration alone (E2eSerializer,
 * E2eDeserializer, E2eConsumerInterceptor). stdout carries only the JSON lines; exit codes: 0 done, 1 vectors
 * failed or bad usage, 2 produce error, 3 a record failed with FAIL, 4 timeout.
 */
public final class Tool {
    private Tool() {}

    public static void main(String[] args) throws Exception {
        if (args.length == 0) usage("no command");
        switch (args[0]) {
            case "vectors":
                if (args.length != 2) usage("vectors DIR");
                System.exit(Vectors.check(Path.of(args[1]), System.out) ? 0 : 1);
                break;
            case "produce":
                System.exit(produce(options(args)));
                break;
            case "consume":
                System.exit(consume(options(args)));
                break;
            default:
                usage("unknown command " + args[0]);
        }
    }

    private static void usage(String why) {
        System.err.println("e2e tool: " + why);
        System.err.println("usage: vectors DIR | produce --bootstrap H:P --topic T --keys DIR --recipients IDS --count N --tag TAG [--pseudonym ID]"
            + " [--seal-headers H,...] [--rotate-records M] [--plaintext] | consume --bootstrap H:P --topic T --keys DIR --count N"
            + " [--on-failure FAIL|DISCARD|CONSUME] [--timeout-ms MS]");
        System.exit(1);
    }

    private static Map<String, String> options(String[] args) {
        Map<String, String> o = new HashMap<>();
        for (int i = 1; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("--")) usage("unexpected argument " + a);
            if (a.equals("--plaintext")) {
                o.put("plaintext", "true");
                continue;
            }
            if (i + 1 >= args.length) usage(a + " needs a value");
            o.put(a.substring(2), args[++i]);
        }
        return o;
    }

    private static String need(Map<String, String> o, String name) {
        String v = o.get(name);
        if (v == null) usage("--" + name + " is required");
        return v;
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static int produce(Map<String, String> o) {
        String topic = need(o, "topic");
        int count = Integer.parseInt(need(o, "count"));
        String tag = need(o, "tag");
        boolean plaintext = o.containsKey("plaintext");
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, need(o, "bootstrap"));
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        if (plaintext) {
            p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
            p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        } else {
            p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, E2eSerializer.class.getName());
            p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, E2eSerializer.class.getName());
            p.put(E2eConfig.KEY_SERIALIZER_INNER, ByteArraySerializer.class.getName());
            p.put(E2eConfig.VALUE_SERIALIZER_INNER, ByteArraySerializer.class.getName());
            p.put(E2eConfig.KEYS_DIR, need(o, "keys"));
            p.put(E2eConfig.KEYS_ENV, "false");
            p.put(E2eConfig.RECIPIENTS, need(o, "recipients"));
            if (o.containsKey("pseudonym")) p.put(E2eConfig.PSEUDONYM_KEY_ID, o.get("pseudonym"));
            if (o.containsKey("seal-headers")) p.put(E2eConfig.SEAL_HEADERS, o.get("seal-headers"));
            if (o.containsKey("rotate-records")) p.put(E2eConfig.ROTATE_RECORDS, o.get("rotate-records"));
        }
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            List<Future<RecordMetadata>> acks = new ArrayList<>(count);
            try {
                for (int i = 0; i < count; i++) {
                    ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(topic, utf8("k" + (i % 7)), utf8(tag + ":" + i + ":" + "x".repeat(i % 13)));
                    r.headers().add("n", utf8(Integer.toString(i)));
                    r.headers().add("h-secret", utf8("s" + i));
                    acks.add(producer.send(r));
                }
                producer.flush();
                for (Future<RecordMetadata> f : acks) f.get();
            } catch (ExecutionException e) {
                Throwable cause = e.getCause() == null ? e : e.getCause();
                System.out.println("{\"error\":" + Json.quote(String.valueOf(cause.getMessage())) + "}");
                return 2;
            } catch (RuntimeException e) {
                System.out.println("{\"error\":" + Json.quote(String.valueOf(e.getMessage())) + "}");
                return 2;
            }
        } catch (RuntimeException e) {
            System.out.println("{\"error\":" + Json.quote(String.valueOf(e.getMessage())) + "}");
            return 2;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            System.out.println("{\"error\":\"interrupted\"}");
            return 2;
        }
        System.out.println("{\"produced\":" + count + "}");
        return 0;
    }

    private static int consume(Map<String, String> o) {
        String topic = need(o, "topic");
        int count = Integer.parseInt(need(o, "count"));
        long timeoutMs = Long.parseLong(o.getOrDefault("timeout-ms", "60000"));
        long deadline = System.currentTimeMillis() + timeoutMs;
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, need(o, "bootstrap"));
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, E2eDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, E2eDeserializer.class.getName());
        p.put(ConsumerConfig.INTERCEPTOR_CLASSES_CONFIG, E2eConsumerInterceptor.class.getName());
        p.put(E2eConfig.KEY_DESERIALIZER_INNER, ByteArrayDeserializer.class.getName());
        p.put(E2eConfig.VALUE_DESERIALIZER_INNER, ByteArrayDeserializer.class.getName());
        p.put(E2eConfig.KEYS_DIR, need(o, "keys"));
        p.put(E2eConfig.KEYS_ENV, "false");
        p.put(E2eConfig.ON_FAILURE, o.getOrDefault("on-failure", "FAIL"));
        p.put(E2eConfig.STATUS_HEADER, "true");
        int delivered = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            List<TopicPartition> partitions = new ArrayList<>();
            while (partitions.isEmpty()) {
                if (System.currentTimeMillis() >= deadline) break;
                List<PartitionInfo> infos;
                try {
                    infos = consumer.partitionsFor(topic, Duration.ofMillis(Math.max(1, Math.min(5000, deadline - System.currentTimeMillis()))));
                } catch (org.apache.kafka.common.errors.TimeoutException e) {
                    infos = List.of();
                }
                for (PartitionInfo i : infos) partitions.add(new TopicPartition(topic, i.partition()));
                if (partitions.isEmpty()) sleep(200);
            }
            if (!partitions.isEmpty()) {
                consumer.assign(partitions);
                consumer.seekToBeginning(partitions);
            }
            while (!partitions.isEmpty() && delivered < count && System.currentTimeMillis() < deadline) {
                ConsumerRecords<byte[], byte[]> records;
                try {
                    records = consumer.poll(Duration.ofMillis(Math.max(1, Math.min(500, deadline - System.currentTimeMillis()))));
                } catch (RecordDeserializationException e) {
                    E2eException cause = E2eException.find(e);
                    String reason = cause != null ? cause.reasonName() : "malformed";
                    System.out.println("{\"failed\":" + Json.quote(reason) + ",\"partition\":" + e.topicPartition().partition() + ",\"offset\":" + e.offset() + "}");
                    return 3;
                }
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    System.out.println(line(r));
                    if (++delivered >= count) break;
                }
            }
        }
        if (delivered >= count) return 0;
        System.out.println("{\"timeout\":true,\"delivered\":" + delivered + "}");
        return 4;
    }

    /** One delivered record as the contract prints it; the library's marker headers give status and reason. */
    static String line(ConsumerRecord<byte[], byte[]> r) {
        String status = RecordDecryptor.Status.PLAINTEXT.wire();
        String reason = null;
        StringBuilder headers = new StringBuilder("[");
        for (Header h : r.headers()) {
            if (h.key().equals(E2eConfig.FAILED_HEADER_NAME)) {
                status = RecordDecryptor.Status.FAILED.wire();
                reason = new String(h.value(), StandardCharsets.UTF_8);
                continue;
            }
            if (h.key().equals(E2eConfig.STATUS_HEADER_NAME)) {
                if (reason == null) status = new String(h.value(), StandardCharsets.UTF_8);
                continue;
            }
            if (headers.length() > 1) headers.append(',');
            headers.append('[').append(Json.quote(h.key())).append(',').append(Json.quote(Hex.of(h.value()))).append(']');
        }
        headers.append(']');
        return "{\"partition\":" + r.partition() + ",\"offset\":" + r.offset() + ",\"key\":" + Json.quote(Hex.of(r.key()))
            + ",\"value\":" + Json.quote(Hex.of(r.value())) + ",\"headers\":" + headers + ",\"status\":" + Json.quote(status)
            + ",\"reason\":" + Json.quote(reason) + "}";
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
