package dev.ledgerline.e2e;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;

import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * Sealing of a record's parts under its data key (src/crypto/README.md, "Sealing"): AES-256-GCM, the nonce
 * derived from the envelope's nonce base, the AAD binding topic, stored key and head.
 *
 * <pre>
 *   nonce(section) = nonce base with its last byte XOR section        (0 value, 1 key, 2 headers)
 *   AAD(section)   = "ledgerline-e2e/1" | u8 section | u16 len, topic | i32 len (-1 = null), stored key | head
 * </pre>
 */
public final class Sealing {
    private static final byte[] AAD_LABEL = "ledgerline-e2e/1".getBytes(StandardCharsets.US_ASCII);

    /**
     * One AES/GCM cipher per thread and direction, initialised afresh for every part (a new nonce each time):
     * Cipher.getInstance per part costs more than sealing a 1 KiB part, and the JDK's AES keeps the expanded
     * key of the last init, so a thread sealing under one data key expands it once.
     */
    private static final ThreadLocal<Cipher> ENCRYPTING = ThreadLocal.withInitial(Sealing::newCipher);
    private static final ThreadLocal<Cipher> DECRYPTING = ThreadLocal.withInitial(Sealing::newCipher);

    private Sealing() {}

    private static Cipher newCipher() {
        try {
            return Cipher.getInstance("AES/GCM/NoPadding");
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-256-GCM is unavailable: " + e, e);
        }
    }

    public static byte[] sectionNonce(byte[] nonceBase, int section) {
        byte[] n = nonceBase.clone();
        n[Envelope.NONCE_BYTES - 1] ^= (byte) section;
        return n;
    }

    public static byte[] sectionAad(int section, String topic, byte[] storedKey, byte[] head) {
        byte[] t = topic.getBytes(StandardCharsets.UTF_8);
        if (t.length > 0xffff) throw new IllegalArgumentException("topic name too long");
        ByteArrayOutputStream out = new ByteArrayOutputStream(AAD_LABEL.length + 7 + t.length + (storedKey == null ? 0 : storedKey.length) + head.length);
        out.writeBytes(AAD_LABEL);
        out.write(section);
        out.write(t.length >>> 8);
        out.write(t.length & 0xff);
        out.writeBytes(t);
        int keyLen = storedKey == null ? -1 : storedKey.length;
        out.write(keyLen >>> 24);
        out.write(keyLen >>> 16);
        out.write(keyLen >>> 8);
        out.write(keyLen);
        if (storedKey != null) out.writeBytes(storedKey);
        out.writeBytes(head);
        return out.toByteArray();
    }

    /** AES-256-GCM encryption: ciphertext, then the 16-byte tag. */
    public static byte[] gcmSeal(byte[] key, byte[] nonce, byte[] aad, byte[] plaintext) {
        try {
            Cipher c = ENCRYPTING.get();
            c.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(key, "AES"), new GCMParameterSpec(Envelope.TAG_BYTES * 8, nonce));
            c.updateAAD(aad);
            return c.doFinal(plaintext);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-256-GCM is unavailable: " + e, e);
        }
    }

    /** AES-256-GCM decryption; throws AEADBadTagException when the part does not authenticate. */
    public static byte[] gcmOpen(byte[] key, byte[] nonce, byte[] aad, byte[] sealed) throws AEADBadTagException {
        if (sealed.length < Envelope.TAG_BYTES) throw new AEADBadTagException("a sealed part is at least its tag");
        try {
            Cipher c = DECRYPTING.get();
            c.init(Cipher.DECRYPT_MODE, new SecretKeySpec(key, "AES"), new GCMParameterSpec(Envelope.TAG_BYTES * 8, nonce));
            c.updateAAD(aad);
            return c.doFinal(sealed);
        } catch (AEADBadTagException e) {
            throw e;
        } catch (GeneralSecurityException e) {
            throw new AEADBadTagException("AES-256-GCM refused the part: " + e.getMessage());
        }
    }

    public static byte[] sealPart(byte[] dataKey, byte[] nonceBase, int section, byte[] aad, byte[] plaintext) {
        if (dataKey.length != Envelope.DATA_KEY_BYTES) throw new IllegalArgumentException("a data key is " + Envelope.DATA_KEY_BYTES + " bytes");
        return gcmSeal(dataKey, sectionNonce(nonceBase, section), aad, plaintext);
    }

    public static byte[] openPart(byte[] dataKey, byte[] nonceBase, int section, byte[] aad, byte[] sealed) throws AEADBadTagException {
        return gcmOpen(dataKey, sectionNonce(nonceBase, section), aad, sealed);
    }
}
