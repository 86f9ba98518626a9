package dev.ledgerline.e2e;

import java.security.GeneralSecurityException;
import java.util.List;

/** Asks each reader in turn; the first that knows a key answers. */
public final class CompositeKeyReader implements KeyReader {
    private final List<KeyReader> readers;

    public CompositeKeyReader(List<KeyReader> readers) {
        this.readers = List.copyOf(readers);
    }

    @Override
    public RecipientKey publicKey(String keyId) {
        for (KeyReader r : readers) {
            RecipientKey k = r.publicKey(keyId);
            if (k != null) return k;
        }
        return null;
    }

    @Override
    public byte[] unwrap(Envelope.WrappedKey w, byte[] dataKeyId) throws GeneralSecurityException {
        for (KeyReader r : readers) {
            byte[] k = r.unwrap(w, dataKeyId);
            if (k != null) return k;
        }
        return null;
    }

    @Override
    public RecordCodec.Pseudonym secret(String keyId) {
        for (KeyReader r : readers) {
            RecordCodec.Pseudonym s = r.secret(keyId);
            if (s != null) return s;
        }
        return null;
    }
}
