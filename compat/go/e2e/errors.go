package e2e

import "fmt"

// Reason says why a record could not be decrypted; the same five words in every implementation
// (src/crypto/README.md, "Consuming").
type Reason string

const (
	// ReasonMalformed: the envelope is not well formed (or there are two, or its value is null).
	ReasonMalformed Reason = "malformed"
	// ReasonNoKey: the key reader holds a private key for none of the envelope's recipients.
	ReasonNoKey Reason = "no-key"
	// ReasonUnwrapFailed: a private key is held but the wrapped data key does not open with it.
	ReasonUnwrapFailed Reason = "unwrap-failed"
	// ReasonUnknownDataKey: the envelope references a data key announced by a record not read.
	ReasonUnknownDataKey Reason = "unknown-data-key"
	// ReasonNotAuthentic: a sealed part does not open (topic, key, envelope or ciphertext changed).
	ReasonNotAuthentic Reason = "not-authentic"
)

// Error is a failure of the format or of authentication, with the reason a consumer's failure action
// reports. Match it with errors.As(err, &e2eErr) where e2eErr is an *Error.
type Error struct {
	Reason  Reason
	Message string
	// Err is the underlying cause, when there is one (a key reader's error, say).
	Err error
}

func (e *Error) Error() string {
	return fmt.Sprintf("e2e %s: %s", e.Reason, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

func errorf(reason Reason, format string, args ...any) *Error {
	return &Error{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// RecordError is an *Error tied to the stored record it happened on; the client wrapper returns it with
// the FAIL action. errors.As finds both it and the *Error inside.
type RecordError struct {
	Topic     string
	Partition int32
	Offset    int64
	Err       *Error
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("%s (record %s-%d at offset %d)", e.Err.Error(), e.Topic, e.Partition, e.Offset)
}

func (e *RecordError) Unwrap() error { return e.Err }
