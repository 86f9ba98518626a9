package dev.ledgerline.e2e;

import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.interfaces.RSAPrivateCrtKey;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.NamedParameterSpec;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.RSAPublicKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.security.spec.XECPublicKeySpec;
import java.util.Arrays;
import java.util.Base64;

import javax.crypto.KeyAgreement;

/**
 * Keys in the forms a key directory holds them: SPKI public keys and PKCS#8 private keys in PEM armour, RSA or
 * X25519 (the JDK's "XDH" key factory). Also the raw 32-byte X25519 public key, which the X25519 wrap uses.
 */
public final class Pem {
    /** The DER prefix of an X25519 SPKI (SEQUENCE { SEQUENCE { OID 1.3.101.110 }, BIT STRING of 32 bytes }). */
    private static final byte[] X25519_SPKI_PREFIX = hex("302a300506032b656e032100");

    private Pem() {}

    static byte[] hex(String s) {
        byte[] b = new byte[s.length() / 2];
        for (int i = 0; i < b.length; i++) b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        return b;
    }

    /** The DER bytes of a PEM block (armour stripped, base64 decoded). */
    public static byte[] der(String pem) {
        StringBuilder b64 = new StringBuilder();
        for (String line : pem.split("\\r?\\n")) {
            String l = line.trim();
            if (l.isEmpty() || l.startsWith("-----")) continue;
            b64.append(l);
        }
        if (b64.length() == 0) throw new IllegalArgumentException("not a PEM block");
        return Base64.getDecoder().decode(b64.toString());
    }

    public static PublicKey publicKey(String pem) {
        byte[] der = der(pem);
        for (String alg : new String[] {"RSA", "XDH"}) {
            try {
                return KeyFactory.getInstance(alg).generatePublic(new X509EncodedKeySpec(der));
            } catch (GeneralSecurityException e) {
                // try the next algorithm
            }
        }
        throw new IllegalArgumentException("a public key must be an RSA or X25519 SPKI");
    }

    public static PrivateKey privateKey(String pem) {
        byte[] der = der(pem);
        for (String alg : new String[] {"RSA", "XDH"}) {
            try {
                return KeyFactory.getInstance(alg).generatePrivate(new PKCS8EncodedKeySpec(der));
            } catch (GeneralSecurityException e) {
                // try the next algorithm
            }
        }
        throw new IllegalArgumentException("a private key must be an RSA or X25519 PKCS#8");
    }

    public static boolean isRsa(java.security.Key k) {
        return "RSA".equals(k.getAlgorithm());
    }

    public static boolean isX25519(java.security.Key k) {
        String a = k.getAlgorithm();
        return "XDH".equals(a) || "X25519".equals(a);
    }

    /** The 32 raw bytes of an X25519 public key: the end of its SPKI encoding. */
    public static byte[] rawX25519(PublicKey k) {
        byte[] enc = k.getEncoded();
        return Arrays.copyOfRange(enc, enc.length - 32, enc.length);
    }

    /** An X25519 public key from its 32 raw bytes. */
    public static PublicKey x25519FromRaw(byte[] raw) {
        if (raw.length != 32) throw new IllegalArgumentException("an X25519 public key is 32 bytes");
        byte[] spki = Arrays.copyOf(X25519_SPKI_PREFIX, X25519_SPKI_PREFIX.length + 32);
        System.arraycopy(raw, 0, spki, X25519_SPKI_PREFIX.length, 32);
        try {
            return KeyFactory.getInstance("XDH").generatePublic(new X509EncodedKeySpec(spki));
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("not an X25519 public key: " + e.getMessage(), e);
        }
    }

    /**
     * The raw public key of an X25519 private key. Java 17 has no direct API, so it is computed as
     * X25519(private, base point u = 9), which by definition is the public key (RFC 7748, section 6.1).
     */
    public static byte[] x25519PublicOf(PrivateKey k) {
        try {
            PublicKey base = KeyFactory.getInstance("XDH").generatePublic(new XECPublicKeySpec(NamedParameterSpec.X25519, BigInteger.valueOf(9)));
            KeyAgreement ka = KeyAgreement.getInstance("XDH");
            ka.init(k);
            ka.doPhase(base, true);
            return ka.generateSecret();
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("not an X25519 private key: " + e.getMessage(), e);
        }
    }

    /** The public key of a private key (RSA: from its CRT form; X25519: computed). */
    public static PublicKey publicOf(PrivateKey k) {
        if (isX25519(k)) return x25519FromRaw(x25519PublicOf(k));
        if (k instanceof RSAPrivateCrtKey) {
            RSAPrivateCrtKey r = (RSAPrivateCrtKey) k;
            try {
                return KeyFactory.getInstance("RSA").generatePublic(new RSAPublicKeySpec(r.getModulus(), r.getPublicExponent()));
            } catch (GeneralSecurityException e) {
                throw new IllegalArgumentException(e);
            }
        }
        throw new IllegalArgumentException("cannot derive the public key of a " + k.getAlgorithm() + " key");
    }

    public static int rsaBits(java.security.Key k) {
        if (k instanceof RSAPublicKey) return ((RSAPublicKey) k).getModulus().bitLength();
        if (k instanceof java.security.interfaces.RSAKey) return ((java.security.interfaces.RSAKey) k).getModulus().bitLength();
        return 0;
    }
}
