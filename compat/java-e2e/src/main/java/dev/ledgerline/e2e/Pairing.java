package dev.ledgerline.e2e;

import java.util.function.Supplier;

/**
 * How the key and the value (de)serializer instances of one producer or consumer find each other. Kafka makes
 * them from the class names and configures them one after the other, key first, on the thread that runs the
 * client's constructor, each with the client's original configs plus its client.id (KafkaProducer's constructor;
 * consumer's Deserializers, Kafka 4.4). So the first configured leaves its shared state in a thread-local slot
 * and the second, of the other kind and with the same client.id and ledgerline.e2e.* configs, takes it. Several
 * clients in one JVM, even on one thread, each pair their own two instances, since a client's key instance is
 * configured right before its value instance.
 */
final class Pairing {
    private static final class Pending {
        final Object shared;
        final Class<?> family;
        final boolean isKey;
        final String signature;

        Pending(Object shared, Class<?> family, boolean isKey, String signature) {
            this.shared = shared;
            this.family = family;
            this.isKey = isKey;
            this.signature = signature;
        }
    }

    private static final ThreadLocal<Pending> PENDING = new ThreadLocal<>();

    private Pairing() {}

    /** The partner's shared state when one is waiting (then it is paired), else a new one left for the partner. */
    static <T> T pair(Class<T> family, boolean isKey, String signature, Supplier<T> make) {
        Pending p = PENDING.get();
        if (p != null && p.family == family && p.isKey != isKey && p.signature.equals(signature)) {
            PENDING.remove();
            return family.cast(p.shared);
        }
        T s = make.get();
        PENDING.set(new Pending(s, family, isKey, signature));
        return s;
    }
}
