package dev.ledgerline.e2e;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Checks the test vectors (test/vectors/e2e/*.json; src/crypto/README.md, "Test vectors") as the e2e tool's
 * {@code vectors} command: seal vectors are sealed, unwrapped and opened; open vectors are opened and must give
 * the record or fail with exactly the reason given.
 */
final class Vectors {
    private Vectors() {}

    /** Prints {@code ok <file>} or {@code FAIL <file>: <why>} per vector; true when all passed. */
    static boolean check(Path dir, PrintStream out) throws IOException {
        List<Path> files = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "*.json")) {
            for (Path p : ds) files.add(p);
        }
        Collections.sort(files);
        if (files.isEmpty()) {
            out.println("FAIL " + dir + ": no vectors");
            return false;
        }
        boolean all = true;
        for (Path f : files) {
            String name = f.getFileName().toString();
            try {
                @SuppressWarnings("unchecked")
                Map<String, Object> v = (Map<String, Object>) Json.parse(Files.readString(f, StandardCharsets.UTF_8));
                String kind = (String) v.get("kind");
                if ("seal".equals(kind)) checkSeal(v);
                else if ("open".equals(kind)) checkOpen(v);
                else throw new AssertionError("unknown kind " + kind);
                out.println("ok " + name);
            } catch (AssertionError | RuntimeException | GeneralSecurityException e) {
                all = false;
                out.println("FAIL " + name + ": " + e.getMessage());
            }
        }
        return all;
    }

    @SuppressWarnings("unchecked")
    static E2eRecord record(Object o) {
        Map<String, Object> m = (Map<String, Object>) o;
        List<Envelope.Header> headers = new ArrayList<>();
        for (Object h : (List<Object>) m.get("headers")) {
            Map<String, Object> hm = (Map<String, Object>) h;
            headers.add(new Envelope.Header((String) hm.get("key"), Hex.parse((String) hm.get("value"))));
        }
        return new E2eRecord(Hex.parse((String) m.get("key")), Hex.parse((String) m.get("value")), headers);
    }

    static String describe(E2eRecord r) {
        StringBuilder b = new StringBuilder("{key=").append(Hex.of(r.key)).append(", value=").append(Hex.of(r.value)).append(", headers=[");
        for (int i = 0; i < r.headers.size(); i++) {
            if (i > 0) b.append(", ");
            b.append(r.headers.get(i).key).append('=').append(Hex.of(r.headers.get(i).value));
        }
        return b.append("]}").toString();
    }

    private static void same(String what, E2eRecord expected, E2eRecord actual) {
        if (!expected.equals(actual)) throw new AssertionError(what + ": expected " + describe(expected) + ", got " + describe(actual));
    }

    @SuppressWarnings("unchecked")
    private static void checkSeal(Map<String, Object> v) throws GeneralSecurityException {
        String topic = (String) v.get("topic");
        E2eRecord input = record(v.get("input"));
        E2eRecord output = record(v.get("output"));
        byte[] dataKey = Hex.parse((String) v.get("dataKey"));
        byte[] dataKeyId = Hex.parse((String) v.get("dataKeyId"));
        byte[] nonceBase = Hex.parse((String) v.get("nonceBase"));
        List<Envelope.WrappedKey> wrapped = new ArrayList<>();
        for (Object ro : (List<Object>) v.get("recipients")) {
            Map<String, Object> r = (Map<String, Object>) ro;
            String keyId = (String) r.get("keyId");
            byte[] given = Hex.parse((String) r.get("wrapped"));
            PrivateKey priv = Pem.privateKey((String) r.get("privateKeyPem"));
            Envelope.WrappedKey w;
            if ("rsa".equals(r.get("type"))) {
                w = new Envelope.WrappedKey(keyId, Envelope.WRAP_RSA_OAEP_256, given);
            } else {
                PrivateKey ephemeral = Pem.privateKey((String) r.get("ephemeralPrivateKeyPem"));
                w = Wrapping.wrap(Pem.publicKey((String) r.get("publicKeyPem")), keyId, dataKeyId, dataKey, ephemeral, Hex.parse((String) r.get("wrapNonce")));
                if (!Arrays.equals(w.wrapped, given)) {
                    throw new AssertionError("X25519 wrap for " + keyId + ": expected " + Hex.of(given) + ", got " + Hex.of(w.wrapped));
                }
            }
            wrapped.add(w);
            byte[] unwrapped = Wrapping.unwrap(priv, keyId, w.algorithm, dataKeyId, given);
            if (!Arrays.equals(unwrapped, dataKey)) throw new AssertionError("unwrap for " + keyId + " gave another data key");
        }
        Map<String, Object> p = (Map<String, Object>) v.get("pseudonym");
        RecordCodec.Pseudonym pseudonym = p == null ? null : new RecordCodec.Pseudonym((String) p.get("keyId"), Hex.parse((String) p.get("secret")));
        List<String> sealHeaders = new ArrayList<>();
        for (Object h : (List<Object>) v.get("sealHeaders")) sealHeaders.add((String) h);
        boolean reference = Boolean.TRUE.equals(v.get("reference"));
        E2eRecord sealed = RecordCodec.seal(input, new RecordCodec.SealParams(topic, dataKeyId, dataKey, nonceBase,
            reference ? Collections.emptyList() : wrapped, pseudonym, sealHeaders));
        same("seal", output, sealed);
        // (3) open the output, through the decryptor: with every recipient's key (or, referenced, the known data key).
        Map<String, String> env = new HashMap<>();
        for (Object ro : (List<Object>) v.get("recipients")) {
            Map<String, Object> r = (Map<String, Object>) ro;
            env.put("LEDGERLINE_E2E_PRIVATE_" + EnvKeyReader.envKeyName((String) r.get("keyId")), (String) r.get("privateKeyPem"));
        }
        RecordDecryptor d = new RecordDecryptor(new EnvKeyReader(env));
        if (reference) d.remember(dataKeyId, dataKey);
        RecordDecryptor.Result res = d.decrypt(topic, output);
        if (res.status != RecordDecryptor.Status.DECRYPTED) throw new AssertionError("open: status " + res.status.wire());
        same("open", input, res.record);
    }

    @SuppressWarnings("unchecked")
    private static void checkOpen(Map<String, Object> v) {
        String topic = (String) v.get("topic");
        E2eRecord stored = record(v.get("record"));
        Map<String, String> env = new HashMap<>();
        for (Object ro : (List<Object>) v.get("recipients")) {
            Map<String, Object> r = (Map<String, Object>) ro;
            env.put("LEDGERLINE_E2E_PRIVATE_" + EnvKeyReader.envKeyName((String) r.get("keyId")), (String) r.get("privateKeyPem"));
        }
        RecordDecryptor d = new RecordDecryptor(new EnvKeyReader(env));
        Object known = v.get("knownDataKeys");
        if (known != null) {
            for (Object ko : (List<Object>) known) {
                Map<String, Object> k = (Map<String, Object>) ko;
                d.remember(Hex.parse((String) k.get("dataKeyId")), Hex.parse((String) k.get("dataKey")));
            }
        }
        String error = (String) v.get("error");
        RecordDecryptor.Result res;
        try {
            res = d.decrypt(topic, stored);
        } catch (E2eException e) {
            if (error == null) throw new AssertionError("expected the record to open, it failed with " + e.reasonName() + ": " + e.getMessage());
            if (!error.equals(e.reasonName())) throw new AssertionError("expected " + error + ", got " + e.reasonName() + ": " + e.getMessage());
            return;
        }
        if (error != null) throw new AssertionError("expected " + error + ", the record opened (" + res.status.wire() + ")");
        same("open", record(v.get("expect")), res.record);
    }
}
