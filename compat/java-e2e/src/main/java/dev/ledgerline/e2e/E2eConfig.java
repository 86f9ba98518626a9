package dev.ledgerline.e2e;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import org.apache.kafka.common.Configurable;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.utils.Utils;

/**
 * The configs of the Kafka (de)serializers and the consumer interceptor, read from the producer's or consumer's
 * own configuration (compat/java-e2e/README.md lists them with their defaults). Kafka hands every configured
 * plugin the client's original configs, so these names sit next to bootstrap.servers.
 */
public final class E2eConfig {
    public static final String PREFIX = "ledgerline.e2e.";
    public static final String KEY_SERIALIZER_INNER = "ledgerline.e2e.key.serializer.inner";
    public static final String VALUE_SERIALIZER_INNER = "ledgerline.e2e.value.serializer.inner";
    public static final String KEY_DESERIALIZER_INNER = "ledgerline.e2e.key.deserializer.inner";
    public static final String VALUE_DESERIALIZER_INNER = "ledgerline.e2e.value.deserializer.inner";
    public static final String KEYS_DIR = "ledgerline.e2e.keys.dir";
    public static final String KEYS_DIR_REFRESH_MS = "ledgerline.e2e.keys.dir.refresh.ms";
    public static final String KEYS_ENV = "ledgerline.e2e.keys.env";
    public static final String KEY_READER_CLASS = "ledgerline.e2e.key.reader.class";
    public static final String RECIPIENTS = "ledgerline.e2e.recipients";
    public static final String PSEUDONYM_KEY_ID = "ledgerline.e2e.pseudonym.key.id";
    public static final String SEAL_HEADERS = "ledgerline.e2e.seal.headers";
    public static final String ROTATE_RECORDS = "ledgerline.e2e.rotate.records";
    public static final String ROTATE_MS = "ledgerline.e2e.rotate.ms";
    public static final String ANNOUNCE_EVERY = "ledgerline.e2e.announce.every";
    public static final String ON_FAILURE = "ledgerline.e2e.on.failure";
    public static final String CACHE_TTL_MS = "ledgerline.e2e.cache.ttl.ms";
    public static final String CACHE_MAX_KEYS = "ledgerline.e2e.cache.max.keys";
    public static final String STATUS_HEADER = "ledgerline.e2e.status.header";

    /** Header a consumer adds to a record it could not decrypt (CONSUME, DISCARD): the reason, UTF-8. */
    public static final String FAILED_HEADER_NAME = "ledgerline.e2e.failed";
    /** Header a consumer adds, when {@link #STATUS_HEADER} is true, to records it delivers: decrypted or plaintext. */
    public static final String STATUS_HEADER_NAME = "ledgerline.e2e.status";

    private final Map<String, ?> configs;

    public E2eConfig(Map<String, ?> configs) {
        this.configs = configs;
    }

    /** The ledgerline.e2e.* entries and the client id: the two (de)serializers of one client agree on these. */
    String signature() {
        TreeMap<String, String> m = new TreeMap<>();
        for (Map.Entry<String, ?> e : configs.entrySet()) {
            if (e.getKey().startsWith(PREFIX)) m.put(e.getKey(), String.valueOf(e.getValue()));
        }
        return configs.get("client.id") + "|" + m;
    }

    public String string(String name) {
        Object v = configs.get(name);
        if (v == null) return null;
        if (v instanceof Class) return ((Class<?>) v).getName();
        String s = v.toString().trim();
        return s.isEmpty() ? null : s;
    }

    public List<String> list(String name) {
        Object v = configs.get(name);
        List<String> out = new ArrayList<>();
        if (v == null) return out;
        if (v instanceof Collection) {
            for (Object o : (Collection<?>) v) {
                String s = o instanceof Class ? ((Class<?>) o).getName() : String.valueOf(o).trim();
                if (!s.isEmpty()) out.add(s);
            }
            return out;
        }
        for (String s : (v instanceof Class ? ((Class<?>) v).getName() : v.toString()).split(",")) {
            if (!s.trim().isEmpty()) out.add(s.trim());
        }
        return out;
    }

    public long longValue(String name, long dflt) {
        String s = string(name);
        if (s == null) return dflt;
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            throw new ConfigException(name, s, "must be a whole number");
        }
    }

    public boolean bool(String name, boolean dflt) {
        String s = string(name);
        if (s == null) return dflt;
        if (s.equalsIgnoreCase("true")) return true;
        if (s.equalsIgnoreCase("false")) return false;
        throw new ConfigException(name, s, "must be true or false");
    }

    public FailureAction onFailure() {
        String s = string(ON_FAILURE);
        if (s == null) return FailureAction.FAIL;
        try {
            return FailureAction.valueOf(s.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new ConfigException(ON_FAILURE, s, "must be FAIL, DISCARD or CONSUME");
        }
    }

    /** An instance of the class a config names (a Class or a class name), or {@code dflt}'s when unset. */
    public <T> T instance(String name, Class<T> type, Class<? extends T> dflt) {
        Object v = configs.get(name);
        try {
            if (v == null || (v instanceof String && ((String) v).trim().isEmpty())) return dflt == null ? null : Utils.newInstance(dflt);
            if (v instanceof Class) return Utils.newInstance(((Class<?>) v).asSubclass(type));
            return Utils.newInstance(v.toString().trim(), type);
        } catch (ClassNotFoundException | RuntimeException e) {
            throw new ConfigException(name, v, "cannot make a " + type.getSimpleName() + ": " + e.getMessage());
        }
    }

    /**
     * The key reader: the class of {@link #KEY_READER_CLASS} (a KMS; configured with these configs when it is
     * Configurable), else the key directory of {@link #KEYS_DIR} followed by the environment ({@link #KEYS_ENV},
     * default true).
     */
    public KeyReader keyReader() {
        KeyReader custom = instance(KEY_READER_CLASS, KeyReader.class, null);
        if (custom != null) {
            if (custom instanceof Configurable) ((Configurable) custom).configure(configs);
            return custom;
        }
        List<KeyReader> readers = new ArrayList<>();
        String dir = string(KEYS_DIR);
        if (dir != null) readers.add(new PemDirectoryKeyReader(Path.of(dir), longValue(KEYS_DIR_REFRESH_MS, 30_000)));
        if (bool(KEYS_ENV, true)) readers.add(new EnvKeyReader());
        if (readers.isEmpty()) throw new ConfigException(KEYS_DIR, null, "no key reader: set " + KEYS_DIR + ", " + KEY_READER_CLASS + " or " + KEYS_ENV + "=true");
        return readers.size() == 1 ? readers.get(0) : new CompositeKeyReader(readers);
    }

    public RecordEncryptor encryptor() {
        List<String> recipients = list(RECIPIENTS);
        if (recipients.isEmpty()) throw new ConfigException(RECIPIENTS, null, "the producer must name at least one recipient key id");
        RecordEncryptor.Options o = new RecordEncryptor.Options(keyReader(), recipients);
        o.pseudonymKeyId = string(PSEUDONYM_KEY_ID);
        o.sealHeaders = list(SEAL_HEADERS);
        o.rotateAfterRecords = longValue(ROTATE_RECORDS, RecordEncryptor.DEFAULT_ROTATE_AFTER_RECORDS);
        o.rotateAfterMs = longValue(ROTATE_MS, RecordEncryptor.DEFAULT_ROTATE_AFTER_MS);
        o.announceEvery = (int) Math.min(Integer.MAX_VALUE, longValue(ANNOUNCE_EVERY, 1));
        if (o.rotateAfterRecords <= 0) throw new ConfigException(ROTATE_RECORDS, o.rotateAfterRecords, "must be positive");
        if (o.rotateAfterMs <= 0) throw new ConfigException(ROTATE_MS, o.rotateAfterMs, "must be positive");
        try {
            return new RecordEncryptor(o);
        } catch (IllegalArgumentException e) {
            throw new ConfigException(e.getMessage());
        }
    }

    public RecordDecryptor decryptor() {
        return new RecordDecryptor(keyReader(), onFailure(), longValue(CACHE_TTL_MS, RecordDecryptor.DEFAULT_CACHE_TTL_MS),
            (int) Math.min(Integer.MAX_VALUE, longValue(CACHE_MAX_KEYS, RecordDecryptor.DEFAULT_CACHE_MAX_KEYS)), System::currentTimeMillis);
    }

    /** Whether the consumer's interceptor.classes holds the E2eConsumerInterceptor (DISCARD needs it). */
    boolean hasConsumerInterceptor() {
        for (String c : list("interceptor.classes")) {
            if (c.equals(E2eConsumerInterceptor.class.getName())) return true;
        }
        return false;
    }
}
