package dev.ledgerline.e2e;

/**
 * A record that cannot be sealed or opened, with the reason a consumer's failure action reports; the reasons
 * are the same in every implementation (src/crypto/README.md, "Consuming").
 */
public final class E2eException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Why a record does not open. */
    public enum Reason {
        /** The envelope breaks the format (README, "The envelope header"). */
        MALFORMED("malformed"),
        /** The key reader holds a private key of no recipient. */
        NO_KEY("no-key"),
        /** A recipient's wrapped data key does not unwrap. */
        UNWRAP_FAILED("unwrap-failed"),
        /** The envelope references a data key this consumer does not hold. */
        UNKNOWN_DATA_KEY("unknown-data-key"),
        /** A sealed part does not authenticate. */
        NOT_AUTHENTIC("not-authentic");

        private final String wire;

        Reason(String wire) {
            this.wire = wire;
        }

        /** The reason as every implementation spells it. */
        public String wire() {
            return wire;
        }

        public static Reason fromWire(String s) {
            for (Reason r : values()) {
                if (r.wire.equals(s)) return r;
            }
            throw new IllegalArgumentException("unknown reason " + s);
        }
    }

    private final Reason reason;

    public E2eException(Reason reason, String message) {
        super(message);
        this.reason = reason;
    }

    public E2eException(Reason reason, String message, Throwable cause) {
        super(message, cause);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }

    /** The reason's wire name: malformed, no-key, unwrap-failed, unknown-data-key or not-authentic. */
    public String reasonName() {
        return reason.wire();
    }

    /** The E2eException in a cause chain (Kafka wraps a deserializer's exception), or null. */
    public static E2eException find(Throwable t) {
        for (int depth = 0; t != null && depth < 16; t = t.getCause(), depth++) {
            if (t instanceof E2eException) return (E2eException) t;
        }
        return null;
    }
}
