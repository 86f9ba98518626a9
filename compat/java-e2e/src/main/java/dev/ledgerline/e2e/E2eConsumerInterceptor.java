package dev.ledgerline.e2e;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.clients.consumer.ConsumerInterceptor;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Headers;

/**
 * The consumer-side companion of E2eDeserializer, in interceptor.classes. A deserializer cannot skip a record, so
 * with ledgerline.e2e.on.failure=DISCARD the deserializer marks the records it cannot decrypt (header
 * ledgerline.e2e.failed) and this interceptor drops them from what poll() returns (the consumer's position has
 * already moved past them, so they are skipped, as Pulsar's DISCARD does).
 *
 * <p>It also completes the one record kind no deserializer sees: a null key AND a null value (the consumer calls
 * neither deserializer), whose envelope may carry sealed headers. Those are opened here; since Kafka logs and
 * ignores an interceptor's exceptions, a failure here marks the record (and DISCARD drops it) even under FAIL.
 */
public final class E2eConsumerInterceptor implements ConsumerInterceptor<Object, Object> {
    private FailureAction onFailure = FailureAction.FAIL;
    private RecordDecryptor decryptor;
    private boolean statusHeader;

    @Override
    public void configure(Map<String, ?> configs) {
        E2eConfig c = new E2eConfig(configs);
        onFailure = c.onFailure();
        statusHeader = c.bool(E2eConfig.STATUS_HEADER, false);
        decryptor = c.decryptor();
    }

    @Override
    public ConsumerRecords<Object, Object> onConsume(ConsumerRecords<Object, Object> records) {
        Map<TopicPartition, List<ConsumerRecord<Object, Object>>> kept = new LinkedHashMap<>();
        boolean changed = false;
        for (TopicPartition tp : records.partitions()) {
            List<ConsumerRecord<Object, Object>> list = new ArrayList<>();
            for (ConsumerRecord<Object, Object> r : records.records(tp)) {
                Headers h = r.headers();
                if (h.lastHeader(E2eConfig.FAILED_HEADER_NAME) == null && r.key() == null && r.value() == null && h.lastHeader(Envelope.HEADER) != null) {
                    openUntouched(tp.topic(), h);
                }
                if (onFailure == FailureAction.DISCARD && h.lastHeader(E2eConfig.FAILED_HEADER_NAME) != null) {
                    changed = true;
                    continue;
                }
                list.add(r);
            }
            if (!list.isEmpty()) kept.put(tp, list);
        }
        if (!changed) return records;
        Map<TopicPartition, OffsetAndMetadata> next = records.nextOffsets();
        return new ConsumerRecords<>(kept, next);
    }

    /** A record with a null key and a null value: only its sealed headers, if any, are to be opened. */
    private void openUntouched(String topic, Headers headers) {
        headers.remove(E2eConfig.STATUS_HEADER_NAME);
        try {
            List<Envelope.Header> stored = KafkaHeaders.list(headers);
            Envelope env = RecordCodec.envelopeOf(stored);
            if (env == null) return;
            byte[] dataKey = decryptor.dataKey(env);
            List<Envelope.Header> sealed = RecordCodec.openHeaders(env, dataKey, topic, null);
            headers.remove(Envelope.HEADER);
            for (Envelope.Header s : sealed) headers.add(s.key, s.value);
            if (statusHeader) headers.add(E2eConfig.STATUS_HEADER_NAME, RecordDecryptor.Status.DECRYPTED.wire().getBytes(StandardCharsets.UTF_8));
        } catch (E2eException e) {
            headers.add(E2eConfig.FAILED_HEADER_NAME, e.reasonName().getBytes(StandardCharsets.UTF_8));
        }
    }

    @Override
    public void onCommit(Map<TopicPartition, OffsetAndMetadata> offsets) {}

    @Override
    public void close() {}
}
