package dev.ledgerline.e2e;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/** Between Kafka's Headers and the neutral header list. */
final class KafkaHeaders {
    private KafkaHeaders() {}

    static List<Envelope.Header> list(Headers headers) {
        List<Envelope.Header> out = new ArrayList<>();
        for (Header h : headers) out.add(new Envelope.Header(h.key(), h.value()));
        return out;
    }

    /** Makes {@code headers} hold exactly {@code list}, in order (Headers has remove by name and add at the end). */
    static void replace(Headers headers, List<Envelope.Header> list) {
        Set<String> names = new LinkedHashSet<>();
        for (Header h : headers) names.add(h.key());
        for (String n : names) headers.remove(n);
        for (Envelope.Header h : list) headers.add(h.key, h.value);
    }
}
