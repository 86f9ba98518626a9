package dev.ledgerline.e2e;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A key directory: {@code <id>.pub.pem} (SPKI), {@code <id>.pem} (PKCS#8), {@code <id>.secret} (base64), as
 * {@code ledgerline keys generate} writes it. The listing is re-read at most every {@code refreshMs} (default
 * 30 s) so that a rotation ({@code ledgerline keys rotate}) is picked up without a restart.
 */
public final class PemDirectoryKeyReader implements KeyReader {
    private final Path dir;
    private final long refreshMs;
    private volatile Set<String> files;
    private volatile long listedAt;
    private final ConcurrentHashMap<String, PrivateKey> privateKeys = new ConcurrentHashMap<>();

    public PemDirectoryKeyReader(Path dir) {
        this(dir, 30_000);
    }

    public PemDirectoryKeyReader(Path dir, long refreshMs) {
        this.dir = dir;
        this.refreshMs = refreshMs;
    }

    private Set<String> files() {
        long now = System.currentTimeMillis();
        Set<String> f = files;
        if (f == null || now - listedAt > refreshMs) {
            Set<String> names = new HashSet<>();
            try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
                for (Path p : ds) names.add(p.getFileName().toString());
            } catch (IOException e) {
                throw new UncheckedIOException("cannot list key directory " + dir, e);
            }
            files = f = names;
            listedAt = now;
        }
        return f;
    }

    private String resolve(String name, String suffix) {
        List<String> ids = new ArrayList<>();
        for (String f : files()) {
            if (f.endsWith(suffix)) ids.add(f.substring(0, f.length() - suffix.length()));
        }
        // "<id>.pem" also matches "<id>.pub.pem" as id "<id>.pub"; those are never asked for by name.
        return KeyReader.newestVersion(ids, name);
    }

    private String read(String file) {
        try {
            return Files.readString(dir.resolve(file), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + dir.resolve(file), e);
        }
    }

    @Override
    public RecipientKey publicKey(String keyId) {
        String id = resolve(keyId, ".pub.pem");
        return id == null ? null : new RecipientKey(id, Pem.publicKey(read(id + ".pub.pem")));
    }

    @Override
    public byte[] unwrap(Envelope.WrappedKey w, byte[] dataKeyId) throws GeneralSecurityException {
        PrivateKey key = privateKeys.get(w.keyId);
        if (key == null) {
            if (w.keyId.contains("/") || w.keyId.equals("..") || !files().contains(w.keyId + ".pem")) return null;
            try {
                key = Pem.privateKey(read(w.keyId + ".pem"));
            } catch (IllegalArgumentException e) {
                throw new GeneralSecurityException("cannot read private key " + w.keyId + ": " + e.getMessage());
            }
            privateKeys.put(w.keyId, key);
        }
        return Wrapping.unwrap(key, w.keyId, w.algorithm, dataKeyId, w.wrapped);
    }

    @Override
    public RecordCodec.Pseudonym secret(String keyId) {
        String id = resolve(keyId, ".secret");
        return id == null ? null : new RecordCodec.Pseudonym(id, Base64.getMimeDecoder().decode(read(id + ".secret").trim()));
    }
}
