package dev.ledgerline.e2e;

import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/** A record as every client has it: key, value (null for null), headers in order. */
public final class E2eRecord {
    public final byte[] key;
    public final byte[] value;
    public final List<Envelope.Header> headers;

    public E2eRecord(byte[] key, byte[] value, List<Envelope.Header> headers) {
        this.key = key;
        this.value = value;
        this.headers = Collections.unmodifiableList(headers);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof E2eRecord)) return false;
        E2eRecord r = (E2eRecord) o;
        return Arrays.equals(key, r.key) && Arrays.equals(value, r.value) && headers.equals(r.headers);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(key) * 31 + Arrays.hashCode(value);
    }
}
