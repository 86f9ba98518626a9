package dev.ledgerline.e2e;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * The producer side (src/crypto/README.md, "Producing"): one data key at a time, rotated by age and record
 * count, wrapped once per recipient when it is made (as Pulsar's MessageCrypto does per key rotation), and a
 * fresh random nonce base per record. Recipient names are resolved when a data key is made, so a key rotated
 * with {@code ledgerline keys rotate} is used from the next data key on. Safe for concurrent use.
 *
 * <p>Nonce budget: a record uses up to three nonces from one random 96-bit base, so a data key seals at most
 * 2^30 records (3 x 2^30 below the 2^32 random IVs NIST SP 800-38D allows); {@code rotateAfterRecords} is
 * capped there.
 */
public final class RecordEncryptor {
    public static final long MAX_RECORDS_PER_DATA_KEY = 1L << 30;
    public static final long DEFAULT_ROTATE_AFTER_MS = 3_600_000L;
    public static final long DEFAULT_ROTATE_AFTER_RECORDS = 1_000_000L;

    /** How an encryptor is set up; recipients are required, the rest has the README's defaults. */
    public static final class Options {
        public final KeyReader keys;
        public final List<String> recipients;
        public String pseudonymKeyId;
        public List<String> sealHeaders = Collections.emptyList();
        public long rotateAfterMs = DEFAULT_ROTATE_AFTER_MS;
        public long rotateAfterRecords = DEFAULT_ROTATE_AFTER_RECORDS;
        /** Carry the wrapped keys in every n-th record of a topic and reference the data key in between; default 1. */
        public int announceEvery = 1;
        public LongSupplier now = System::currentTimeMillis;

        public Options(KeyReader keys, List<String> recipients) {
            this.keys = keys;
            this.recipients = List.copyOf(recipients);
        }
    }

    private static final class DataKey {
        final byte[] id;
        final byte[] key;
        final List<Envelope.WrappedKey> wrapped;
        final long madeAt;
        long sealed;
        final Map<String, Integer> sinceAnnounced = new HashMap<>();

        DataKey(byte[] id, byte[] key, List<Envelope.WrappedKey> wrapped, long madeAt) {
            this.id = id;
            this.key = key;
            this.wrapped = wrapped;
            this.madeAt = madeAt;
        }
    }

    private final Options options;
    private final long rotateAfterMs;
    private final long rotateAfterRecords;
    private final int announceEvery;
    private final SecureRandom random = new SecureRandom();
    private DataKey current;
    private RecordCodec.Pseudonym pseudonym;

    public RecordEncryptor(Options options) {
        if (options.recipients.isEmpty()) throw new IllegalArgumentException("an encryptor needs at least one recipient");
        if (options.recipients.size() > 255) throw new IllegalArgumentException("at most 255 recipients");
        if (options.rotateAfterMs <= 0 || options.rotateAfterRecords <= 0) throw new IllegalArgumentException("rotation bounds must be positive");
        this.options = options;
        this.rotateAfterMs = options.rotateAfterMs;
        this.rotateAfterRecords = Math.min(options.rotateAfterRecords, MAX_RECORDS_PER_DATA_KEY);
        this.announceEvery = Math.max(1, options.announceEvery);
    }

    /** Forces a new data key for the next record. */
    public synchronized void rotate() {
        current = null;
    }

    private DataKey makeDataKey() {
        byte[] id = new byte[Envelope.DATA_KEY_ID_BYTES];
        byte[] key = new byte[Envelope.DATA_KEY_BYTES];
        random.nextBytes(id);
        random.nextBytes(key);
        List<Envelope.WrappedKey> wrapped = new ArrayList<>();
        for (String name : options.recipients) {
            KeyReader.RecipientKey pub = options.keys.publicKey(name);
            if (pub == null) throw new IllegalStateException("no public key for recipient " + name);
            wrapped.add(Wrapping.wrap(pub.key, pub.keyId, id, key));
        }
        return new DataKey(id, key, Collections.unmodifiableList(wrapped), options.now.getAsLong());
    }

    /** The pseudonym secret, or null when keys stay in the clear. */
    public synchronized RecordCodec.Pseudonym pseudonym() {
        if (options.pseudonymKeyId == null) return null;
        if (pseudonym == null) {
            RecordCodec.Pseudonym s = options.keys.secret(options.pseudonymKeyId);
            if (s == null) throw new IllegalStateException("no pseudonym secret " + options.pseudonymKeyId);
            pseudonym = s;
        }
        return pseudonym;
    }

    /** The key as it will be stored: its pseudonym when pseudonyms are on, else itself; null stays null. */
    public byte[] storedKey(byte[] key) {
        RecordCodec.Pseudonym p = pseudonym();
        return key == null || p == null ? key : RecordCodec.pseudonymOf(p.secret, key);
    }

    /** The sealed form of one record of {@code topic}. */
    public E2eRecord encrypt(String topic, E2eRecord record) {
        RecordCodec.Pseudonym p = pseudonym();
        DataKey dk;
        boolean announce;
        synchronized (this) {
            long now = options.now.getAsLong();
            if (current == null || current.sealed >= rotateAfterRecords || now - current.madeAt >= rotateAfterMs) current = makeDataKey();
            dk = current;
            dk.sealed++;
            Integer since = dk.sinceAnnounced.get(topic);
            announce = since == null || since + 1 >= announceEvery;
            dk.sinceAnnounced.put(topic, announce ? 0 : since + 1);
        }
        byte[] nonceBase = new byte[Envelope.NONCE_BYTES];
        random.nextBytes(nonceBase);
        return RecordCodec.seal(record, new RecordCodec.SealParams(topic, dk.id, dk.key, nonceBase,
            announce ? dk.wrapped : Collections.emptyList(), p, options.sealHeaders));
    }
}
