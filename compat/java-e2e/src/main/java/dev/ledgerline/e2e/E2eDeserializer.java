package dev.ledgerline.e2e;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.utils.Utils;

/**
 * End-to-end decryption for an unchanged KafkaConsumer, by configuration alone: set this class as BOTH
 * key.deserializer and value.deserializer, and name the application's own deserializers in
 * ledgerline.e2e.key.deserializer.inner / ledgerline.e2e.value.deserializer.inner (compat/java-e2e/README.md).
 *
 * <p>The consumer (CompletedFetch.parseRecord, Kafka 4.4) calls the key deserializer only for a non-null key,
 * then the value deserializer only for a non-null value, on the polling thread, both with the record's one
 * (mutable) Headers instance. So whichever runs first decrypts what it can: the key instance, which has the
 * stored key, unwraps the data key, opens the original key (pseudonyms) and the sealed headers, restores the
 * headers (clear ones without the envelope, then the sealed ones) and hands the envelope, data key and stored
 * key to the value instance through a thread-local tagged with that Headers instance; the value instance opens
 * the value with it, or, when the tag is another record's (a null key: the key instance was not called), does
 * everything itself with a null stored key. A tombstone's key and headers are restored by the key instance.
 *
 * <p>Failure actions: FAIL throws E2eException, which the consumer raises from poll() as a
 * RecordDeserializationException (cause: the E2eException with its reason) at that record's offset, nothing
 * skipped. CONSUME delivers the record as stored (ciphertext, envelope header on) plus the header
 * ledgerline.e2e.failed = reason. DISCARD marks the record the same way and the E2eConsumerInterceptor, which
 * DISCARD requires in interceptor.classes, drops it from what poll() returns.
 */
public final class E2eDeserializer implements Deserializer<Object> {
    private Deserializer<Object> inner;
    private ConsumerSide side;
    private boolean isKey;

    @Override
    @SuppressWarnings("unchecked")
    public void configure(Map<String, ?> configs, boolean isKey) {
        this.isKey = isKey;
        E2eConfig c = new E2eConfig(configs);
        if (c.onFailure() == FailureAction.DISCARD && !c.hasConsumerInterceptor()) {
            throw new ConfigException(E2eConfig.ON_FAILURE, "DISCARD", "needs interceptor.classes to include " + E2eConsumerInterceptor.class.getName()
                + ": a deserializer cannot skip a record, the interceptor drops those the deserializer marked");
        }
        inner = c.instance(isKey ? E2eConfig.KEY_DESERIALIZER_INNER : E2eConfig.VALUE_DESERIALIZER_INNER, Deserializer.class, ByteArrayDeserializer.class);
        if (inner instanceof E2eDeserializer) throw new ConfigException("an inner deserializer cannot be E2eDeserializer itself");
        inner.configure(configs, isKey);
        side = Pairing.pair(ConsumerSide.class, isKey, c.signature(), () -> new ConsumerSide(c.decryptor(), c.bool(E2eConfig.STATUS_HEADER, false)));
        side.join();
        if (!isKey && !side.paired()) {
            throw new ConfigException("E2eDeserializer must be both key.deserializer and value.deserializer of the consumer: "
                + "opening the value needs the record key as stored");
        }
    }

    @Override
    public Object deserialize(String topic, byte[] data) {
        throw new IllegalStateException("E2eDeserializer needs the record's headers; KafkaConsumer passes them");
    }

    @Override
    public Object deserialize(String topic, Headers headers, byte[] data) {
        if (side == null) throw new IllegalStateException("E2eDeserializer is not configured");
        if (isKey) return deserializeKey(topic, headers, data);
        ConsumerSide.KeyHandoff h = side.handoff.get();
        side.handoff.remove();
        if (h == null || h.headers != headers) {
            // The key was null, so the key instance did not run for this record: everything happens here.
            h = openHead(topic, headers, null);
            if (h.failed) return inner.deserialize(topic, headers, data);
        }
        if (h.failed || h.envelope == null) return inner.deserialize(topic, headers, data);
        byte[] value;
        try {
            value = RecordCodec.openValue(h.envelope, h.dataKey, topic, h.storedKey, data);
        } catch (E2eException e) {
            if (side.decryptor.onFailure() == FailureAction.FAIL) throw e;
            KafkaHeaders.replace(headers, h.stored);
            markFailed(headers, e);
            return inner.deserialize(topic, headers, data);
        }
        return inner.deserialize(topic, headers, value);
    }

    private Object deserializeKey(String topic, Headers headers, byte[] data) {
        side.handoff.remove();
        ConsumerSide.KeyHandoff h = openHead(topic, headers, data);
        side.handoff.set(h);
        if (h.failed || h.envelope == null) return inner.deserialize(topic, headers, data);
        return inner.deserialize(topic, headers, h.originalKey);
    }

    /**
     * Finds the envelope, unwraps the data key, opens the original key and the sealed headers and restores the
     * headers; on failure applies the action (FAIL throws, else the record is marked).
     */
    private ConsumerSide.KeyHandoff openHead(String topic, Headers headers, byte[] storedKey) {
        // A producer's own marker headers are not trusted: only this consumer marks records.
        headers.remove(E2eConfig.FAILED_HEADER_NAME);
        headers.remove(E2eConfig.STATUS_HEADER_NAME);
        ConsumerSide.KeyHandoff h = new ConsumerSide.KeyHandoff(headers, storedKey);
        try {
            List<Envelope.Header> stored = KafkaHeaders.list(headers);
            Envelope env = RecordCodec.envelopeOf(stored);
            if (env == null) {
                if (side.statusHeader) headers.add(E2eConfig.STATUS_HEADER_NAME, bytes(RecordDecryptor.Status.PLAINTEXT.wire()));
                return h;
            }
            byte[] dataKey = side.decryptor.dataKey(env);
            h.originalKey = RecordCodec.openKey(env, dataKey, topic, storedKey);
            List<Envelope.Header> sealed = RecordCodec.openHeaders(env, dataKey, topic, storedKey);
            h.envelope = env;
            h.dataKey = dataKey;
            h.stored = stored;
            headers.remove(Envelope.HEADER);
            for (Envelope.Header s : sealed) headers.add(s.key, s.value);
            if (side.statusHeader) headers.add(E2eConfig.STATUS_HEADER_NAME, bytes(RecordDecryptor.Status.DECRYPTED.wire()));
            return h;
        } catch (E2eException e) {
            if (side.decryptor.onFailure() == FailureAction.FAIL) throw e;
            markFailed(headers, e);
            h.failed = true;
            return h;
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static void markFailed(Headers headers, E2eException e) {
        headers.remove(E2eConfig.STATUS_HEADER_NAME);
        headers.add(E2eConfig.FAILED_HEADER_NAME, bytes(e.reasonName()));
    }

    @Override
    public void close() {
        if (inner != null) Utils.closeQuietly(inner, "inner deserializer");
    }
}
