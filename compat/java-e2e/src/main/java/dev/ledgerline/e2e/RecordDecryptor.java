package dev.ledgerline.e2e;

import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

import dev.ledgerline.e2e.E2eException.Reason;

/**
 * The consumer side (src/crypto/README.md, "Consuming"): finds the envelope, unwraps the data key with the first
 * recipient whose private key the key reader holds (cached by data key id for a bounded time and count), opens
 * the record, and applies the failure action when it cannot. A record without an envelope is plaintext and is
 * delivered as it is. Safe for concurrent use.
 */
public final class RecordDecryptor {
    public static final long DEFAULT_CACHE_TTL_MS = 600_000L;
    public static final int DEFAULT_CACHE_MAX_KEYS = 1000;

    public enum Status {
        DECRYPTED("decrypted"), PLAINTEXT("plaintext"), FAILED("failed");

        private final String wire;

        Status(String wire) {
            this.wire = wire;
        }

        public String wire() {
            return wire;
        }
    }

    /** The outcome for one record: with DISCARD a failed result has a null record, with CONSUME the stored one. */
    public static final class Result {
        public final Status status;
        public final E2eRecord record;
        public final E2eException error;

        Result(Status status, E2eRecord record, E2eException error) {
            this.status = status;
            this.record = record;
            this.error = error;
        }
    }

    private static final class Cached {
        final byte[] key;
        final long expires;

        Cached(byte[] key, long expires) {
            this.key = key;
            this.expires = expires;
        }
    }

    private final KeyReader keys;
    private final FailureAction onFailure;
    private final long ttlMs;
    private final int maxKeys;
    private final LongSupplier now;
    /** Unwrapped data keys by id (hex), oldest first. */
    private final LinkedHashMap<String, Cached> cache = new LinkedHashMap<>();

    public RecordDecryptor(KeyReader keys) {
        this(keys, FailureAction.FAIL, DEFAULT_CACHE_TTL_MS, DEFAULT_CACHE_MAX_KEYS, System::currentTimeMillis);
    }

    public RecordDecryptor(KeyReader keys, FailureAction onFailure, long ttlMs, int maxKeys, LongSupplier now) {
        this.keys = keys;
        this.onFailure = onFailure;
        this.ttlMs = ttlMs;
        this.maxKeys = Math.max(1, maxKeys);
        this.now = now;
    }

    public FailureAction onFailure() {
        return onFailure;
    }

    /** Data keys held now. */
    public synchronized int cachedKeys() {
        return cache.size();
    }

    /** Puts a data key into the cache, as if unwrapped (a consumer that learnt it some other way; the vectors). */
    public synchronized void remember(byte[] dataKeyId, byte[] dataKey) {
        put(Hex.of(dataKeyId), dataKey);
    }

    private void put(String id, byte[] dataKey) {
        cache.remove(id);
        cache.put(id, new Cached(dataKey, now.getAsLong() + ttlMs));
        Iterator<Map.Entry<String, Cached>> it = cache.entrySet().iterator();
        while (cache.size() > maxKeys && it.hasNext()) {
            it.next();
            it.remove();
        }
    }

    /** The data key of an envelope: cached, or unwrapped; throws E2eException (no-key, unwrap-failed, unknown-data-key). */
    public byte[] dataKey(Envelope env) {
        String id = Hex.of(env.dataKeyId);
        synchronized (this) {
            Cached hit = cache.get(id);
            if (hit != null && hit.expires > now.getAsLong()) return hit.key;
            if (hit != null) cache.remove(id);
        }
        if (env.wrappedKeys.isEmpty()) {
            throw new E2eException(Reason.UNKNOWN_DATA_KEY, "the record references data key " + id
                + ", announced by an earlier record this consumer has not read (or no longer holds)");
        }
        Exception last = null;
        for (Envelope.WrappedKey w : env.wrappedKeys) {
            try {
                byte[] k = keys.unwrap(w, env.dataKeyId);
                if (k != null) {
                    synchronized (this) {
                        put(id, k);
                    }
                    return k;
                }
            } catch (GeneralSecurityException | RuntimeException e) {
                last = e;
            }
        }
        if (last != null) throw new E2eException(Reason.UNWRAP_FAILED, "the data key " + id + " does not unwrap: " + last.getMessage(), last);
        List<String> ids = new ArrayList<>();
        for (Envelope.WrappedKey w : env.wrappedKeys) ids.add(w.keyId);
        throw new E2eException(Reason.NO_KEY, "no private key for any recipient of data key " + id + " (" + String.join(", ", ids) + ")");
    }

    /** Decrypts one record of {@code topic}; with FAIL an undecryptable record throws E2eException. */
    public Result decrypt(String topic, E2eRecord record) {
        try {
            Envelope env = RecordCodec.envelopeOf(record.headers);
            if (env == null) return new Result(Status.PLAINTEXT, record, null);
            return new Result(Status.DECRYPTED, RecordCodec.open(record, topic, env, dataKey(env)), null);
        } catch (E2eException e) {
            if (onFailure == FailureAction.FAIL) throw e;
            return new Result(Status.FAILED, onFailure == FailureAction.CONSUME ? record : null, e);
        }
    }
}
