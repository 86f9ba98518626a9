package dev.ledgerline.e2e;

import org.apache.kafka.common.header.Headers;

/** What the key and the value E2eSerializer of one producer share: the encryptor and the key hand-off. */
final class ProducerSide {
    /** What the key serializer hands the value serializer for one record: tagged by its Headers instance. */
    static final class KeyHandoff {
        final Headers headers;
        final byte[] originalKey;
        final byte[] storedKey;

        KeyHandoff(Headers headers, byte[] originalKey, byte[] storedKey) {
            this.headers = headers;
            this.originalKey = originalKey;
            this.storedKey = storedKey;
        }
    }

    final RecordEncryptor encryptor;
    /** Per sending thread: KafkaProducer.send serializes the key, then the value, on the caller's thread. */
    final ThreadLocal<KeyHandoff> handoff = new ThreadLocal<>();
    private int members;

    ProducerSide(RecordEncryptor encryptor) {
        this.encryptor = encryptor;
    }

    synchronized void join() {
        members++;
    }

    synchronized boolean paired() {
        return members >= 2;
    }
}
