package dev.ledgerline.e2e;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.spec.MGF1ParameterSpec;
import java.util.Arrays;

import javax.crypto.Cipher;
import javax.crypto.KeyAgreement;
import javax.crypto.Mac;
import javax.crypto.spec.OAEPParameterSpec;
import javax.crypto.spec.PSource;
import javax.crypto.spec.SecretKeySpec;

/**
 * Wrapping a data key for one recipient (src/crypto/README.md, "Wrapping").
 *
 * <pre>
 * RSA-OAEP-256 (0x01):  RSAES-OAEP(SHA-256, MGF1 with SHA-256, label = data key id)(data key)
 * X25519-HKDF-SHA256-A256GCM (0x02):
 *   shared  = X25519(e.private, recipient public)
 *   kek     = HKDF-SHA256(shared, salt = e.public | recipient public, info = "ledgerline-e2e/1 x25519" | data key id, 32)
 *   wrapped = e.public (32) | nonce (12) | AES-256-GCM(kek, nonce, AAD = recipient key id)(data key) | tag (16)
 * </pre>
 * Java's OAEPWithSHA-256AndMGF1Padding uses MGF1 with SHA-1 unless given the parameters, so they are explicit.
 */
public final class Wrapping {
    public static final int MIN_RSA_BITS = 2048;
    private static final byte[] X25519_INFO = "ledgerline-e2e/1 x25519".getBytes(StandardCharsets.US_ASCII);
    public static final int X25519_WRAPPED_BYTES = 32 + Envelope.NONCE_BYTES + Envelope.DATA_KEY_BYTES + Envelope.TAG_BYTES;
    private static final SecureRandom RANDOM = new SecureRandom();

    private Wrapping() {}

    /** The wrap algorithm a recipient key calls for; throws for a key of another kind or a short RSA key. */
    public static int algorithmOf(Key k) {
        if (Pem.isRsa(k)) {
            int bits = Pem.rsaBits(k);
            if (bits < MIN_RSA_BITS) throw new IllegalArgumentException("an RSA recipient key needs at least " + MIN_RSA_BITS + " bits, this one has " + bits);
            return Envelope.WRAP_RSA_OAEP_256;
        }
        if (Pem.isX25519(k)) return Envelope.WRAP_X25519_HKDF_SHA256_A256GCM;
        throw new IllegalArgumentException("a recipient key must be RSA or X25519, not " + k.getAlgorithm());
    }

    private static OAEPParameterSpec oaep(byte[] dataKeyId) {
        return new OAEPParameterSpec("SHA-256", "MGF1", MGF1ParameterSpec.SHA256, new PSource.PSpecified(dataKeyId));
    }

    /** Wraps with fresh randomness. */
    public static Envelope.WrappedKey wrap(PublicKey recipient, String keyId, byte[] dataKeyId, byte[] dataKey) {
        return wrap(recipient, keyId, dataKeyId, dataKey, null, null);
    }

    /**
     * Wraps; for X25519 the ephemeral private key and the nonce may be given (test vectors), else they are
     * fresh.
     */
    public static Envelope.WrappedKey wrap(PublicKey recipient, String keyId, byte[] dataKeyId, byte[] dataKey, PrivateKey ephemeral, byte[] nonce) {
        int algorithm = algorithmOf(recipient);
        try {
            if (algorithm == Envelope.WRAP_RSA_OAEP_256) {
                Cipher c = Cipher.getInstance("RSA/ECB/OAEPPadding");
                c.init(Cipher.ENCRYPT_MODE, recipient, oaep(dataKeyId), RANDOM);
                return new Envelope.WrappedKey(keyId, algorithm, c.doFinal(dataKey));
            }
            if (ephemeral == null) ephemeral = KeyPairGenerator.getInstance("X25519").generateKeyPair().getPrivate();
            if (nonce == null) {
                nonce = new byte[Envelope.NONCE_BYTES];
                RANDOM.nextBytes(nonce);
            }
            byte[] ephemeralPublic = Pem.x25519PublicOf(ephemeral);
            byte[] recipientPublic = Pem.rawX25519(recipient);
            byte[] kek = kek(x25519(ephemeral, recipient), ephemeralPublic, recipientPublic, dataKeyId);
            byte[] sealed = Sealing.gcmSeal(kek, nonce, keyId.getBytes(StandardCharsets.UTF_8), dataKey);
            ByteArrayOutputStream out = new ByteArrayOutputStream(X25519_WRAPPED_BYTES);
            out.writeBytes(ephemeralPublic);
            out.writeBytes(nonce);
            out.writeBytes(sealed);
            return new Envelope.WrappedKey(keyId, algorithm, out.toByteArray());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot wrap for " + keyId + ": " + e, e);
        }
    }

    private static byte[] x25519(PrivateKey priv, PublicKey pub) throws GeneralSecurityException {
        KeyAgreement ka = KeyAgreement.getInstance("XDH");
        ka.init(priv);
        ka.doPhase(pub, true);
        return ka.generateSecret();
    }

    private static byte[] kek(byte[] shared, byte[] ephemeralPublic, byte[] recipientPublic, byte[] dataKeyId) {
        byte[] salt = new byte[64];
        System.arraycopy(ephemeralPublic, 0, salt, 0, 32);
        System.arraycopy(recipientPublic, 0, salt, 32, 32);
        byte[] info = Arrays.copyOf(X25519_INFO, X25519_INFO.length + dataKeyId.length);
        System.arraycopy(dataKeyId, 0, info, X25519_INFO.length, dataKeyId.length);
        return hkdfSha256(shared, salt, info, 32);
    }

    /** HKDF-SHA256, RFC 5869: extract, then expand to {@code length} bytes. */
    public static byte[] hkdfSha256(byte[] ikm, byte[] salt, byte[] info, int length) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(salt.length == 0 ? new byte[32] : salt, "HmacSHA256"));
            byte[] prk = mac.doFinal(ikm);
            mac.init(new SecretKeySpec(prk, "HmacSHA256"));
            ByteArrayOutputStream okm = new ByteArrayOutputStream(length + 32);
            byte[] t = new byte[0];
            for (int i = 1; okm.size() < length; i++) {
                mac.update(t);
                mac.update(info);
                mac.update((byte) i);
                t = mac.doFinal();
                okm.writeBytes(t);
            }
            return Arrays.copyOf(okm.toByteArray(), length);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is unavailable", e);
        }
    }

    /** Unwraps with the recipient's private key; throws GeneralSecurityException when it does not open. */
    public static byte[] unwrap(PrivateKey key, String keyId, int algorithm, byte[] dataKeyId, byte[] wrapped) throws GeneralSecurityException {
        int own;
        try {
            own = algorithmOf(key);
        } catch (IllegalArgumentException e) {
            throw new GeneralSecurityException(e.getMessage());
        }
        if (own != algorithm) throw new GeneralSecurityException("key " + keyId + " is " + key.getAlgorithm() + ", the data key was wrapped with algorithm " + algorithm);
        byte[] dataKey;
        if (algorithm == Envelope.WRAP_RSA_OAEP_256) {
            Cipher c = Cipher.getInstance("RSA/ECB/OAEPPadding");
            c.init(Cipher.DECRYPT_MODE, key, oaep(dataKeyId));
            dataKey = c.doFinal(wrapped);
        } else {
            if (wrapped.length != X25519_WRAPPED_BYTES) throw new GeneralSecurityException("an X25519 wrapped key is " + X25519_WRAPPED_BYTES + " bytes, got " + wrapped.length);
            byte[] ephemeralPublic = Arrays.copyOfRange(wrapped, 0, 32);
            byte[] nonce = Arrays.copyOfRange(wrapped, 32, 32 + Envelope.NONCE_BYTES);
            byte[] sealed = Arrays.copyOfRange(wrapped, 32 + Envelope.NONCE_BYTES, wrapped.length);
            byte[] shared = x25519(key, Pem.x25519FromRaw(ephemeralPublic));
            byte[] kek = kek(shared, ephemeralPublic, Pem.x25519PublicOf(key), dataKeyId);
            dataKey = Sealing.gcmOpen(kek, nonce, keyId.getBytes(StandardCharsets.UTF_8), sealed);
        }
        if (dataKey.length != Envelope.DATA_KEY_BYTES) throw new GeneralSecurityException("an unwrapped data key is " + Envelope.DATA_KEY_BYTES + " bytes, got " + dataKey.length);
        return dataKey;
    }
}
