package dev.ledgerline.e2e;

import java.util.Arrays;
import java.util.Map;

import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.utils.Utils;

/**
 * End-to-end encryption for an unchanged KafkaProducer, by configuration alone: set this class as BOTH
 * key.serializer and value.serializer, and name the application's own serializers in
 * ledgerline.e2e.key.serializer.inner / ledgerline.e2e.value.serializer.inner (compat/java-e2e/README.md).
 *
 * <p>KafkaProducer.doSend (Kafka 4.4) serializes the key, then the value, on the sending thread, passing both
 * the record's one Headers instance, and makes the headers read-only only afterwards. So the key instance
 * serializes the key with the inner serializer, replaces it by its pseudonym when configured (what it returns
 * is what is stored, partitioned and compacted on), and hands the original and the stored key to the value
 * instance through a thread-local tagged with that Headers instance; the value instance serializes the value,
 * seals value, original key and chosen headers (the AAD needs the stored key), and rewrites the headers: the
 * clear ones, then the ledgerline.e2e envelope. A null value (tombstone) stays null and still gets its envelope.
 */
public final class E2eSerializer implements Serializer<Object> {
    private Serializer<Object> inner;
    private ProducerSide side;
    private boolean isKey;

    @Override
    @SuppressWarnings("unchecked")
    public void configure(Map<String, ?> configs, boolean isKey) {
        this.isKey = isKey;
        E2eConfig c = new E2eConfig(configs);
        inner = c.instance(isKey ? E2eConfig.KEY_SERIALIZER_INNER : E2eConfig.VALUE_SERIALIZER_INNER, Serializer.class, ByteArraySerializer.class);
        if (inner instanceof E2eSerializer) throw new ConfigException("an inner serializer cannot be E2eSerializer itself");
        inner.configure(configs, isKey);
        side = Pairing.pair(ProducerSide.class, isKey, c.signature(), () -> new ProducerSide(c.encryptor()));
        side.join();
        if (!isKey && !side.paired()) {
            throw new ConfigException("E2eSerializer must be both key.serializer and value.serializer of the producer: "
                + "sealing the value needs the record key as stored");
        }
    }

    @Override
    public byte[] serialize(String topic, Object data) {
        throw new SerializationException("E2eSerializer needs the record's headers; KafkaProducer passes them");
    }

    @Override
    public byte[] serialize(String topic, Headers headers, Object data) {
        if (side == null) throw new SerializationException("E2eSerializer is not configured");
        if (isKey) {
            byte[] key = inner.serialize(topic, headers, data);
            byte[] stored;
            try {
                stored = side.encryptor.storedKey(key);
            } catch (RuntimeException e) {
                side.handoff.remove();
                throw new SerializationException("cannot make the pseudonym of the key: " + e.getMessage(), e);
            }
            side.handoff.set(new ProducerSide.KeyHandoff(headers, key, stored));
            return stored;
        }
        ProducerSide.KeyHandoff h = side.handoff.get();
        side.handoff.remove();
        if (h == null || h.headers != headers) {
            throw new SerializationException("E2eSerializer as value.serializer got no key from E2eSerializer as key.serializer for this record; "
                + "configure it as both");
        }
        byte[] value = inner.serialize(topic, headers, data);
        E2eRecord sealed;
        try {
            sealed = side.encryptor.encrypt(topic, new E2eRecord(h.originalKey, value, KafkaHeaders.list(headers)));
        } catch (RuntimeException e) {
            throw new SerializationException("cannot encrypt the record for topic " + topic + ": " + e.getMessage(), e);
        }
        if (!Arrays.equals(sealed.key, h.storedKey)) throw new SerializationException("the stored key changed between key and value serialization");
        KafkaHeaders.replace(headers, sealed.headers);
        return sealed.value;
    }

    @Override
    public void close() {
        if (inner != null) Utils.closeQuietly(inner, "inner serializer");
    }
}
