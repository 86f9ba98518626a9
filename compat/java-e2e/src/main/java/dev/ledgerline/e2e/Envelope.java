package dev.ledgerline.e2e;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * The end-to-end envelope, version 1: the binary value of a record's {@code ledgerline.e2e} header
 * (src/crypto/README.md, "The envelope header"). Lays out and parses bytes only; no key, no cryptography.
 *
 * <pre>
 *   0   1   version 0x01        1   1   cipher 0x01 AES-256-GCM      2   1   flags (KEYS 1, PSEUDONYM 2, HEADERS 4)
 *   3   16  data key id         19  12  nonce base
 *   31  ... if KEYS: u8 n (1..255), n x { u8 len, key id, u8 wrap, u16 len, wrapped }
 *       ... if PSEUDONYM: u8 len, pseudonym key id
 *       --- the head ends here ---
 *       ... if PSEUDONYM: u32 len (>= 16), sealed key;  if HEADERS: u32 len (>= 16), sealed headers
 * </pre>
 * Integers are big-endian, unsigned.
 */
public final class Envelope {
    public static final String HEADER = "ledgerline.e2e";
    public static final int VERSION = 1;
    public static final int CIPHER_AES_256_GCM = 1;
    public static final int FLAG_KEYS = 0x01;
    public static final int FLAG_PSEUDONYM = 0x02;
    public static final int FLAG_HEADERS = 0x04;
    private static final int KNOWN_FLAGS = FLAG_KEYS | FLAG_PSEUDONYM | FLAG_HEADERS;
    public static final int DATA_KEY_ID_BYTES = 16;
    public static final int NONCE_BYTES = 12;
    public static final int TAG_BYTES = 16;
    public static final int DATA_KEY_BYTES = 32;
    private static final int FIXED_HEAD_BYTES = 3 + DATA_KEY_ID_BYTES + NONCE_BYTES;

    /** Wrap algorithms, by their byte. */
    public static final int WRAP_RSA_OAEP_256 = 1;
    public static final int WRAP_X25519_HKDF_SHA256_A256GCM = 2;

    /** The sections a data key seals; each picks its nonce and AAD (README, "Sealing"). */
    public static final int SECTION_VALUE = 0;
    public static final int SECTION_KEY = 1;
    public static final int SECTION_HEADERS = 2;

    /** A data key wrapped for one recipient. */
    public static final class WrappedKey {
        public final String keyId;
        public final int algorithm;
        public final byte[] wrapped;

        public WrappedKey(String keyId, int algorithm, byte[] wrapped) {
            this.keyId = keyId;
            this.algorithm = algorithm;
            this.wrapped = wrapped;
        }
    }

    /** A header as the sealed-headers section holds it (and as the neutral record shape has it). */
    public static final class Header {
        public final String key;
        /** Null for a null value. */
        public final byte[] value;

        public Header(String key, byte[] value) {
            this.key = key;
            this.value = value;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Header && ((Header) o).key.equals(key) && Arrays.equals(((Header) o).value, value);
        }

        @Override
        public int hashCode() {
            return key.hashCode() * 31 + Arrays.hashCode(value);
        }
    }

    public final int version;
    public final int cipher;
    public final byte[] dataKeyId;
    public final byte[] nonceBase;
    /** Empty when the envelope references a data key announced by an earlier record. */
    public final List<WrappedKey> wrappedKeys;
    /** The pseudonym secret's key id when the record key is a pseudonym, else null. */
    public final String pseudonymKeyId;
    public final byte[] sealedKey;
    public final byte[] sealedHeaders;
    /** Bytes [0, head end): in the AAD of every sealed part. */
    public final byte[] head;

    private Envelope(int version, int cipher, byte[] dataKeyId, byte[] nonceBase, List<WrappedKey> wrappedKeys, String pseudonymKeyId,
                     byte[] sealedKey, byte[] sealedHeaders, byte[] head) {
        this.version = version;
        this.cipher = cipher;
        this.dataKeyId = dataKeyId;
        this.nonceBase = nonceBase;
        this.wrappedKeys = wrappedKeys;
        this.pseudonymKeyId = pseudonymKeyId;
        this.sealedKey = sealedKey;
        this.sealedHeaders = sealedHeaders;
        this.head = head;
    }

    private static byte[] idBytes(String what, String id) {
        byte[] b = id.getBytes(StandardCharsets.UTF_8);
        if (b.length < 1 || b.length > 255) throw new IllegalArgumentException(what + " must be 1 to 255 bytes of UTF-8, got " + b.length);
        return b;
    }

    /** Lays out an envelope's head, as a producer writes it before sealing. */
    public static byte[] encodeHead(byte[] dataKeyId, byte[] nonceBase, List<WrappedKey> wrappedKeys, String pseudonymKeyId, boolean sealsHeaders) {
        if (dataKeyId.length != DATA_KEY_ID_BYTES) throw new IllegalArgumentException("data key id must be " + DATA_KEY_ID_BYTES + " bytes");
        if (nonceBase.length != NONCE_BYTES) throw new IllegalArgumentException("nonce base must be " + NONCE_BYTES + " bytes");
        if (wrappedKeys.size() > 255) throw new IllegalArgumentException("at most 255 recipients");
        ByteArrayOutputStream out = new ByteArrayOutputStream(64);
        int flags = (wrappedKeys.isEmpty() ? 0 : FLAG_KEYS) | (pseudonymKeyId != null ? FLAG_PSEUDONYM : 0) | (sealsHeaders ? FLAG_HEADERS : 0);
        out.write(VERSION);
        out.write(CIPHER_AES_256_GCM);
        out.write(flags);
        out.writeBytes(dataKeyId);
        out.writeBytes(nonceBase);
        if (!wrappedKeys.isEmpty()) {
            out.write(wrappedKeys.size());
            for (WrappedKey w : wrappedKeys) {
                byte[] id = idBytes("recipient key id", w.keyId);
                if (w.wrapped.length < 1 || w.wrapped.length > 0xffff) throw new IllegalArgumentException("a wrapped key must be 1 to 65535 bytes");
                out.write(id.length);
                out.writeBytes(id);
                out.write(w.algorithm);
                out.write(w.wrapped.length >>> 8);
                out.write(w.wrapped.length & 0xff);
                out.writeBytes(w.wrapped);
            }
        }
        if (pseudonymKeyId != null) {
            byte[] id = idBytes("pseudonym key id", pseudonymKeyId);
            out.write(id.length);
            out.writeBytes(id);
        }
        return out.toByteArray();
    }

    private static void writeU32(ByteArrayOutputStream out, int n) {
        out.write(n >>> 24);
        out.write(n >>> 16);
        out.write(n >>> 8);
        out.write(n);
    }

    /** The whole header value: the head, then the sealed parts its flags announce. */
    public static byte[] encode(byte[] head, byte[] sealedKey, byte[] sealedHeaders) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(head.length + 64);
        out.writeBytes(head);
        if (sealedKey != null) {
            writeU32(out, sealedKey.length);
            out.writeBytes(sealedKey);
        }
        if (sealedHeaders != null) {
            writeU32(out, sealedHeaders.length);
            out.writeBytes(sealedHeaders);
        }
        return out.toByteArray();
    }

    /** Parses a header value, checking every length against the bytes present; throws E2eException(MALFORMED). */
    public static Envelope decode(byte[] v) {
        Reader r = new Reader(v);
        r.need(FIXED_HEAD_BYTES, "the fixed head");
        int version = v[0] & 0xff;
        if (version != VERSION) throw malformed("unknown envelope version " + version);
        int cipher = v[1] & 0xff;
        if (cipher != CIPHER_AES_256_GCM) throw malformed("unknown cipher " + cipher);
        int flags = v[2] & 0xff;
        if ((flags & ~KNOWN_FLAGS) != 0) throw malformed("unknown flags 0x" + Integer.toHexString(flags));
        byte[] dataKeyId = Arrays.copyOfRange(v, 3, 3 + DATA_KEY_ID_BYTES);
        byte[] nonceBase = Arrays.copyOfRange(v, 3 + DATA_KEY_ID_BYTES, FIXED_HEAD_BYTES);
        r.pos = FIXED_HEAD_BYTES;
        List<WrappedKey> wrapped = new ArrayList<>();
        if ((flags & FLAG_KEYS) != 0) {
            r.need(1, "the recipient count");
            int n = r.u8();
            if (n == 0) throw malformed("KEYS is set but no recipient follows");
            for (int i = 0; i < n; i++) {
                String keyId = r.id("recipient " + i + "'s key id");
                r.need(3, "recipient " + i + "'s wrap algorithm and length");
                int algorithm = r.u8();
                if (algorithm != WRAP_RSA_OAEP_256 && algorithm != WRAP_X25519_HKDF_SHA256_A256GCM) {
                    throw malformed("recipient " + i + " has unknown wrap algorithm " + algorithm);
                }
                int len = r.u16();
                if (len == 0) throw malformed("recipient " + i + "'s wrapped key is empty");
                r.need(len, "recipient " + i + "'s wrapped key");
                wrapped.add(new WrappedKey(keyId, algorithm, r.take(len)));
            }
        }
        String pseudonymKeyId = (flags & FLAG_PSEUDONYM) != 0 ? r.id("the pseudonym key id") : null;
        byte[] head = Arrays.copyOfRange(v, 0, r.pos);
        byte[] sealedKey = pseudonymKeyId != null ? r.sealed("the sealed key") : null;
        byte[] sealedHeaders = (flags & FLAG_HEADERS) != 0 ? r.sealed("the sealed headers") : null;
        if (r.pos != v.length) throw malformed((v.length - r.pos) + " bytes follow the envelope");
        return new Envelope(version, cipher, dataKeyId, nonceBase, Collections.unmodifiableList(wrapped), pseudonymKeyId, sealedKey, sealedHeaders, head);
    }

    private static E2eException malformed(String message) {
        return new E2eException(E2eException.Reason.MALFORMED, message);
    }

    /** A bounds-checked cursor: never reads past the value, never allocates more than it holds. */
    private static final class Reader {
        final byte[] v;
        int pos;

        Reader(byte[] v) {
            this.v = v;
        }

        void need(long n, String what) {
            if (v.length - pos < n) throw malformed("envelope ends inside " + what + " (at byte " + pos + ", " + v.length + " bytes in all)");
        }

        int u8() {
            return v[pos++] & 0xff;
        }

        int u16() {
            int n = ((v[pos] & 0xff) << 8) | (v[pos + 1] & 0xff);
            pos += 2;
            return n;
        }

        long u32() {
            long n = ((long) (v[pos] & 0xff) << 24) | ((v[pos + 1] & 0xff) << 16) | ((v[pos + 2] & 0xff) << 8) | (v[pos + 3] & 0xff);
            pos += 4;
            return n;
        }

        byte[] take(int n) {
            byte[] b = Arrays.copyOfRange(v, pos, pos + n);
            pos += n;
            return b;
        }

        String id(String what) {
            need(1, "the length of " + what);
            int len = u8();
            if (len == 0) throw malformed("empty " + what);
            need(len, what);
            return new String(take(len), StandardCharsets.UTF_8);
        }

        byte[] sealed(String what) {
            need(4, "the length of " + what);
            long len = u32();
            if (len < TAG_BYTES) throw malformed(what + " is " + len + " bytes, shorter than its " + TAG_BYTES + "-byte tag");
            need(len, what);
            return take((int) len);
        }
    }

    /** The sealed-headers plaintext: u16 count, then count x { u16 len, name (UTF-8), i32 len (-1 = null), value }. */
    public static byte[] encodeHeaderList(List<Header> headers) {
        if (headers.size() > 0xffff) throw new IllegalArgumentException("at most 65535 sealed headers");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(headers.size() >>> 8);
        out.write(headers.size() & 0xff);
        for (Header h : headers) {
            byte[] name = h.key.getBytes(StandardCharsets.UTF_8);
            if (name.length > 0xffff) throw new IllegalArgumentException("a sealed header name must be at most 65535 bytes");
            out.write(name.length >>> 8);
            out.write(name.length & 0xff);
            out.writeBytes(name);
            writeU32(out, h.value == null ? -1 : h.value.length);
            if (h.value != null) out.writeBytes(h.value);
        }
        return out.toByteArray();
    }

    /** Parses what encodeHeaderList wrote (after authentication, so a failure is a producer's bug: MALFORMED). */
    public static List<Header> decodeHeaderList(byte[] b) {
        Reader r = new Reader(b);
        r.need(2, "the sealed header count");
        int count = r.u16();
        List<Header> out = new ArrayList<>(Math.min(count, 1024));
        for (int i = 0; i < count; i++) {
            r.need(2, "sealed header " + i);
            int nameLen = r.u16();
            r.need(nameLen + 4L, "sealed header " + i);
            String key = new String(r.take(nameLen), StandardCharsets.UTF_8);
            int valueLen = (int) r.u32();
            if (valueLen < -1) throw malformed("sealed header " + i + " has length " + valueLen);
            if (valueLen == -1) {
                out.add(new Header(key, null));
                continue;
            }
            r.need(valueLen, "sealed header " + i + "'s value");
            out.add(new Header(key, r.take(valueLen)));
        }
        if (r.pos != b.length) throw malformed("bytes follow the sealed header list");
        return out;
    }
}
