package dev.ledgerline.e2e;

/** What a consumer does with a record it cannot decrypt (Pulsar's ConsumerCryptoFailureAction). */
public enum FailureAction {
    /** An error with the reason; the record is not delivered and nothing after it is skipped (the default). */
    FAIL,
    /** The record is skipped. */
    DISCARD,
    /** The record is delivered as stored, flagged as failed with the reason. */
    CONSUME
}
