package dev.ledgerline.compat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.config.SslConfigs;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Produces and consumes over an SSL or SASL_SSL listener with kafka-clients, for
 * test/integration/security-clients.test.ts (which compiles this file with javac when target/classes lacks it).
 *
 * <pre>
 * SecurityCheck --bootstrap HOST:PORT --topic T --count N --group G
 *     --security-protocol SSL|SASL_SSL --ca-location CA.pem
 *     [--keystore-location KEY_AND_CHAIN.pem]
 *     [--sasl-mechanism SCRAM-SHA-512 --username U --password P]
 * </pre>
 *
 * The trust store and key store are PEM files (ssl.truststore.type=PEM, ssl.keystore.type=PEM, KIP-651); the key
 * store holds the unencrypted PKCS#8 key and the certificate chain. Produces N records (key "k&lt;i&gt;", value
 * "&lt;topic&gt;:&lt;i&gt;") to partition 0 with acks=all, then reads the topic from the start as a member of
 * group G until N records came or 30 s passed. Prints JSON lines: {"produced": N}, then one {"partition",
 * "offset", "key", "value"} per record read; {"error": "..."} and exit 1 when the client fails,
 * {"timeout": true, "consumed": k} and exit 2 when too few records came. The same contract as
 * compat/python/security_check.py and compat/go/securitycheck.
 */
public final class SecurityCheck {
    private static final Duration DEADLINE = Duration.ofSeconds(30);

    private SecurityCheck() {}

    private static String quote(String s) {
        if (s == null) return "null";
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

    private static String text(byte[] b) {
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }

    public static void main(String[] argv) {
        Map<String, String> a = new java.util.HashMap<>();
        for (int i = 0; i + 1 < argv.length; i += 2) a.put(argv[i].replaceFirst("^--", ""), argv[i + 1]);
        String topic = a.get("topic");
        int count = Integer.parseInt(a.get("count"));

        Properties common = new Properties();
        common.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, a.get("bootstrap"));
        common.put(CommonClientConfigs.CLIENT_ID_CONFIG, "security-check-java");
        common.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, a.get("security-protocol"));
        common.put(SslConfigs.SSL_TRUSTSTORE_TYPE_CONFIG, "PEM");
        common.put(SslConfigs.SSL_TRUSTSTORE_LOCATION_CONFIG, a.get("ca-location"));
        if (a.containsKey("keystore-location")) {
            common.put(SslConfigs.SSL_KEYSTORE_TYPE_CONFIG, "PEM");
            common.put(SslConfigs.SSL_KEYSTORE_LOCATION_CONFIG, a.get("keystore-location"));
        }
        if (a.containsKey("sasl-mechanism")) {
            common.put(SaslConfigs.SASL_MECHANISM, a.get("sasl-mechanism"));
            common.put(SaslConfigs.SASL_JAAS_CONFIG, "org.apache.kafka.common.security.scram.ScramLoginModule required username="
                    + quote(a.get("username")) + " password=" + quote(a.get("password")) + ";");
        }
        // A refused handshake or sign-in is final: no reconnecting for minutes.
        common.put(CommonClientConfigs.RECONNECT_BACKOFF_MAX_MS_CONFIG, "1000");

        int got = 0;
        try {
            Properties pp = new Properties();
            pp.putAll(common);
            pp.put(ProducerConfig.ACKS_CONFIG, "all");
            pp.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, String.valueOf(DEADLINE.toMillis()));
            pp.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, String.valueOf(DEADLINE.toMillis()));
            pp.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
            try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(pp, new ByteArraySerializer(), new ByteArraySerializer())) {
                List<Future<RecordMetadata>> sent = new ArrayList<>();
                for (int i = 0; i < count; i++) {
                    sent.add(p.send(new ProducerRecord<>(topic, 0, ("k" + i).getBytes(StandardCharsets.UTF_8), (topic + ":" + i).getBytes(StandardCharsets.UTF_8))));
                }
                for (Future<RecordMetadata> f : sent) f.get(DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
            }
            System.out.println("{\"produced\": " + count + "}");

            Properties cp = new Properties();
            cp.putAll(common);
            cp.put(ConsumerConfig.GROUP_ID_CONFIG, a.get("group"));
            cp.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            cp.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
            try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(cp, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
                c.subscribe(List.of(topic));
                long end = System.nanoTime() + DEADLINE.toNanos();
                while (got < count && System.nanoTime() < end) {
                    for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(500))) {
                        System.out.println("{\"partition\": " + r.partition() + ", \"offset\": " + r.offset() + ", \"key\": " + quote(text(r.key()))
                                + ", \"value\": " + quote(text(r.value())) + "}");
                        got++;
                    }
                }
            }
        } catch (Exception e) {
            e.printStackTrace();
            Throwable root = e;
            String msg = e.toString();
            while (root.getCause() != null && root.getCause() != root) {
                root = root.getCause();
                msg += " / caused by " + root;
            }
            System.out.println("{\"error\": " + quote(msg) + "}");
            System.out.flush();
            System.exit(1);
        }
        if (got < count) {
            System.out.println("{\"timeout\": true, \"consumed\": " + got + "}");
            System.out.flush();
            System.exit(2);
        }
        System.out.flush();
        System.exit(0);
    }
}
