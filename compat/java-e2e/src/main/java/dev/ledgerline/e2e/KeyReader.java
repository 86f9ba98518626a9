package dev.ledgerline.e2e;

import java.security.GeneralSecurityException;
import java.security.PublicKey;

/**
 * Where producers find recipients' public keys and pseudonym secrets, and consumers unwrap data keys
 * (src/crypto/README.md, "Keys"). It is also the interface a KMS implements: {@link #unwrap} gets the wrapped
 * bytes, so a private key may stay inside the KMS. Implementations must be safe for concurrent use.
 *
 * <p>A name without a version ({@code orders}) resolves to its newest {@code orders.v<N>} (the unversioned
 * name counting as version 0); the answer carries the exact id, which is what goes into envelopes.
 */
public interface KeyReader {
    /** A recipient's public key with the exact key id it resolved to. */
    final class RecipientKey {
        public final String keyId;
        public final PublicKey key;

        public RecipientKey(String keyId, PublicKey key) {
            this.keyId = keyId;
            this.key = key;
        }
    }

    /** The public key of a recipient, or null when unknown. */
    RecipientKey publicKey(String keyId);

    /**
     * The data key {@code w} wraps, or null when this reader holds no private key for {@code w.keyId}; throws
     * when it holds one and unwrapping fails.
     */
    byte[] unwrap(Envelope.WrappedKey w, byte[] dataKeyId) throws GeneralSecurityException;

    /** A pseudonym secret with the exact key id it resolved to, or null when unknown. */
    RecordCodec.Pseudonym secret(String keyId);

    /** The newest version of {@code name} among {@code ids}, or null (see the class comment). */
    static String newestVersion(Iterable<String> ids, String name) {
        String best = null;
        long bestVersion = -1;
        for (String id : ids) {
            long version = -1;
            if (id.equals(name)) {
                version = 0;
            } else if (id.startsWith(name + ".v")) {
                String n = id.substring(name.length() + 2);
                if (!n.isEmpty() && n.length() <= 18 && n.chars().allMatch(Character::isDigit)) version = Long.parseLong(n);
            }
            if (version > bestVersion) {
                best = id;
                bestVersion = version;
            }
        }
        return best;
    }
}
