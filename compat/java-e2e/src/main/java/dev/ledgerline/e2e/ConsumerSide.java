package dev.ledgerline.e2e;

import java.util.List;

import org.apache.kafka.common.header.Headers;

/** What the key and the value E2eDeserializer of one consumer share: the decryptor (its data key cache) and the hand-off. */
final class ConsumerSide {
    /** What the key deserializer hands the value deserializer for one record: tagged by its Headers instance. */
    static final class KeyHandoff {
        final Headers headers;
        final byte[] storedKey;
        /** The key as the application gets it (opened when it is a pseudonym). */
        byte[] originalKey;
        /** Null: plaintext (no envelope). */
        Envelope envelope;
        byte[] dataKey;
        /** The headers as stored, to put back when the value then fails to open (CONSUME, DISCARD). */
        List<Envelope.Header> stored;
        boolean failed;

        KeyHandoff(Headers headers, byte[] storedKey) {
            this.headers = headers;
            this.storedKey = storedKey;
        }
    }

    final RecordDecryptor decryptor;
    final boolean statusHeader;
    /** Per polling thread: the consumer deserializes a record's key, then its value, on the thread that polls. */
    final ThreadLocal<KeyHandoff> handoff = new ThreadLocal<>();
    private int members;

    ConsumerSide(RecordDecryptor decryptor, boolean statusHeader) {
        this.decryptor = decryptor;
        this.statusHeader = statusHeader;
    }

    synchronized void join() {
        members++;
    }

    synchronized boolean paired() {
        return members >= 2;
    }
}
