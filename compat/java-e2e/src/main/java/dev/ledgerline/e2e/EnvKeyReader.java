package dev.ledgerline.e2e;

import java.security.GeneralSecurityException;
import java.util.Base64;
import java.util.Locale;
import java.util.Map;

/**
 * Keys from environment variables: {@code LEDGERLINE_E2E_PUBLIC_<ID>} and {@code LEDGERLINE_E2E_PRIVATE_<ID>}
 * (PEM text), {@code LEDGERLINE_E2E_SECRET_<ID>} (base64), {@code <ID>} being the key id upper-cased with every
 * character outside [A-Z0-9] replaced by '_'. No versions: ids are exact.
 */
public final class EnvKeyReader implements KeyReader {
    private final Map<String, String> env;

    public EnvKeyReader() {
        this(System.getenv());
    }

    public EnvKeyReader(Map<String, String> env) {
        this.env = env;
    }

    /** The environment variable name part of a key id. */
    public static String envKeyName(String keyId) {
        return keyId.toUpperCase(Locale.ROOT).replaceAll("[^A-Z0-9]", "_");
    }

    @Override
    public RecipientKey publicKey(String keyId) {
        String pem = env.get("LEDGERLINE_E2E_PUBLIC_" + envKeyName(keyId));
        return pem == null ? null : new RecipientKey(keyId, Pem.publicKey(pem));
    }

    @Override
    public byte[] unwrap(Envelope.WrappedKey w, byte[] dataKeyId) throws GeneralSecurityException {
        String pem = env.get("LEDGERLINE_E2E_PRIVATE_" + envKeyName(w.keyId));
        if (pem == null) return null;
        try {
            return Wrapping.unwrap(Pem.privateKey(pem), w.keyId, w.algorithm, dataKeyId, w.wrapped);
        } catch (IllegalArgumentException e) {
            throw new GeneralSecurityException("cannot read private key " + w.keyId + ": " + e.getMessage());
        }
    }

    @Override
    public RecordCodec.Pseudonym secret(String keyId) {
        String b64 = env.get("LEDGERLINE_E2E_SECRET_" + envKeyName(keyId));
        return b64 == null ? null : new RecordCodec.Pseudonym(keyId, Base64.getMimeDecoder().decode(b64.trim()));
    }
}
