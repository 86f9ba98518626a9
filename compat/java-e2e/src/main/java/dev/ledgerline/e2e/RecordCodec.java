package dev.ledgerline.e2e;

import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import javax.crypto.AEADBadTagException;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import dev.ledgerline.e2e.E2eException.Reason;

/**
 * The deterministic core: a record sealed and opened as src/crypto/README.md specifies, over the neutral record
 * shape. Randomness and keys come in as parameters (the encryptor and decryptor supply them); this is what the
 * test vectors pin down. The Kafka (de)serializers use the per-section pieces, since Kafka hands them the key
 * and the value separately.
 */
public final class RecordCodec {
    private RecordCodec() {}

    /** A pseudonym secret and its exact key id. */
    public static final class Pseudonym {
        public final String keyId;
        public final byte[] secret;

        public Pseudonym(String keyId, byte[] secret) {
            this.keyId = keyId;
            this.secret = secret;
        }
    }

    /** What a producer chose for one record. */
    public static final class SealParams {
        public final String topic;
        public final byte[] dataKeyId;
        public final byte[] dataKey;
        public final byte[] nonceBase;
        /** Empty: the envelope references the data key. */
        public final List<Envelope.WrappedKey> wrappedKeys;
        /** Null: keys stay in the clear. */
        public final Pseudonym pseudonym;
        public final Collection<String> sealHeaders;

        public SealParams(String topic, byte[] dataKeyId, byte[] dataKey, byte[] nonceBase, List<Envelope.WrappedKey> wrappedKeys, Pseudonym pseudonym,
                          Collection<String> sealHeaders) {
            this.topic = topic;
            this.dataKeyId = dataKeyId;
            this.dataKey = dataKey;
            this.nonceBase = nonceBase;
            this.wrappedKeys = wrappedKeys;
            this.pseudonym = pseudonym;
            this.sealHeaders = sealHeaders;
        }
    }

    /** HMAC-SHA256(secret, key). */
    public static byte[] pseudonymOf(byte[] secret, byte[] key) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            return mac.doFinal(key);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is unavailable", e);
        }
    }

    public static E2eRecord seal(E2eRecord record, SealParams p) {
        Set<String> sealNames = new HashSet<>(p.sealHeaders);
        List<Envelope.Header> clear = new ArrayList<>();
        List<Envelope.Header> sealed = new ArrayList<>();
        for (Envelope.Header h : record.headers) {
            if (h.key.equals(Envelope.HEADER)) throw new E2eException(Reason.MALFORMED, "the record already has a " + Envelope.HEADER + " header");
            (sealNames.contains(h.key) ? sealed : clear).add(h);
        }
        Pseudonym pseudonym = p.pseudonym != null && record.key != null ? p.pseudonym : null;
        byte[] storedKey = pseudonym != null ? pseudonymOf(pseudonym.secret, record.key) : record.key;
        byte[] head = Envelope.encodeHead(p.dataKeyId, p.nonceBase, p.wrappedKeys, pseudonym == null ? null : pseudonym.keyId, !sealed.isEmpty());
        byte[] sealedKey = pseudonym != null ? sealSection(p, Envelope.SECTION_KEY, storedKey, head, record.key) : null;
        byte[] sealedHeaders = sealed.isEmpty() ? null : sealSection(p, Envelope.SECTION_HEADERS, storedKey, head, Envelope.encodeHeaderList(sealed));
        byte[] value = record.value == null ? null : sealSection(p, Envelope.SECTION_VALUE, storedKey, head, record.value);
        clear.add(new Envelope.Header(Envelope.HEADER, Envelope.encode(head, sealedKey, sealedHeaders)));
        return new E2eRecord(storedKey, value, clear);
    }

    private static byte[] sealSection(SealParams p, int section, byte[] storedKey, byte[] head, byte[] plaintext) {
        return Sealing.sealPart(p.dataKey, p.nonceBase, section, Sealing.sectionAad(section, p.topic, storedKey, head), plaintext);
    }

    /** The envelope among headers: null when there is none (plaintext); MALFORMED when repeated, null or malformed. */
    public static Envelope envelopeOf(List<Envelope.Header> headers) {
        byte[] found = null;
        boolean seen = false;
        for (Envelope.Header h : headers) {
            if (!h.key.equals(Envelope.HEADER)) continue;
            if (seen) throw new E2eException(Reason.MALFORMED, "the record has more than one " + Envelope.HEADER + " header");
            seen = true;
            found = h.value;
        }
        if (!seen) return null;
        if (found == null) throw new E2eException(Reason.MALFORMED, "the " + Envelope.HEADER + " header has a null value");
        return Envelope.decode(found);
    }

    private static final String[] SECTION_NAMES = {"value", "key", "headers"};

    /** Opens one sealed part; NOT_AUTHENTIC when it does not authenticate. */
    public static byte[] openSection(Envelope env, byte[] dataKey, int section, String topic, byte[] storedKey, byte[] sealed) {
        try {
            return Sealing.openPart(dataKey, env.nonceBase, section, Sealing.sectionAad(section, topic, storedKey, env.head), sealed);
        } catch (AEADBadTagException e) {
            throw new E2eException(Reason.NOT_AUTHENTIC, "the record's " + SECTION_NAMES[section] + " does not authenticate under data key "
                + Hex.of(env.dataKeyId) + " (topic, key or envelope changed, or a wrong key)");
        }
    }

    /** The original key: section 1 opened when the key is a pseudonym, else the stored key. */
    public static byte[] openKey(Envelope env, byte[] dataKey, String topic, byte[] storedKey) {
        return env.sealedKey == null ? storedKey : openSection(env, dataKey, Envelope.SECTION_KEY, topic, storedKey, env.sealedKey);
    }

    /** The sealed headers (section 2), empty when there are none. */
    public static List<Envelope.Header> openHeaders(Envelope env, byte[] dataKey, String topic, byte[] storedKey) {
        if (env.sealedHeaders == null) return new ArrayList<>();
        return Envelope.decodeHeaderList(openSection(env, dataKey, Envelope.SECTION_HEADERS, topic, storedKey, env.sealedHeaders));
    }

    /** The value (section 0); null stays null. */
    public static byte[] openValue(Envelope env, byte[] dataKey, String topic, byte[] storedKey, byte[] sealedValue) {
        return sealedValue == null ? null : openSection(env, dataKey, Envelope.SECTION_VALUE, topic, storedKey, sealedValue);
    }

    /** Opens a sealed record: key restored, clear headers (without the envelope) first, then the sealed ones. */
    public static E2eRecord open(E2eRecord record, String topic, Envelope env, byte[] dataKey) {
        byte[] key = openKey(env, dataKey, topic, record.key);
        byte[] value = openValue(env, dataKey, topic, record.key, record.value);
        List<Envelope.Header> headers = new ArrayList<>();
        for (Envelope.Header h : record.headers) {
            if (!h.key.equals(Envelope.HEADER)) headers.add(h);
        }
        headers.addAll(openHeaders(env, dataKey, topic, record.key));
        return new E2eRecord(key, value, headers);
    }
}
