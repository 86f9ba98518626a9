package e2e

// The consumer side (README, "Consuming"): finds the envelope, unwraps the data key with whichever
// recipient key the key reader holds (cached by data key id for a bounded time and count), opens the
// record, and applies the failure action when it cannot (Pulsar's ConsumerCryptoFailureAction):
//
//	FAIL     (default) an *Error; nothing is delivered and nothing after it is skipped
//	DISCARD  the record is dropped
//	CONSUME  the record is delivered as stored (ciphertext, envelope header still on it), flagged failed
//
// A record without an envelope is plaintext and is delivered as it is.

import (
	"container/list"
	"context"
	"crypto/cipher"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// FailureAction is what a consumer does with a record it cannot decrypt.
type FailureAction int

const (
	Fail FailureAction = iota
	Discard
	Consume
)

func (a FailureAction) String() string {
	switch a {
	case Fail:
		return "FAIL"
	case Discard:
		return "DISCARD"
	case Consume:
		return "CONSUME"
	}
	return fmt.Sprintf("FailureAction(%d)", int(a))
}

// ParseFailureAction reads FAIL, DISCARD or CONSUME (any case).
func ParseFailureAction(s string) (FailureAction, error) {
	switch strings.ToUpper(s) {
	case "FAIL":
		return Fail, nil
	case "DISCARD":
		return Discard, nil
	case "CONSUME":
		return Consume, nil
	}
	return Fail, fmt.Errorf("a failure action is FAIL, DISCARD or CONSUME, not %q", s)
}

// Status is what became of a record read.
type Status int

const (
	StatusPlaintext Status = iota
	StatusDecrypted
	StatusFailed
)

func (s Status) String() string {
	switch s {
	case StatusPlaintext:
		return "plaintext"
	case StatusDecrypted:
		return "decrypted"
	case StatusFailed:
		return "failed"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

const (
	DefaultCacheTTL     = 10 * time.Minute
	DefaultCacheMaxKeys = 1000
)

// DecryptorConfig configures a Decryptor. Keys is required.
type DecryptorConfig struct {
	Keys      KeyReader
	OnFailure FailureAction
	// CacheTTL is how long an unwrapped data key stays in memory; default 10 minutes.
	CacheTTL time.Duration
	// CacheMaxKeys is how many unwrapped data keys are kept at most; default 1,000.
	CacheMaxKeys int
	Now          func() time.Time
}

type cached struct {
	id  string
	err error // why the data key did not unwrap
	// aead is the data key's AES-256-GCM, made once for every record the key opens (or why it could not be).
	aead    cipher.AEAD
	aeadErr error
	done    chan struct{}
	expires time.Time
	elem    *list.Element
}

// Decryptor opens records; safe for concurrent use. Records of one data key arriving together unwrap it
// once.
type Decryptor struct {
	cfg DecryptorConfig

	mu    sync.Mutex
	cache map[string]*cached
	order *list.List // oldest first
}

// NewDecryptor checks the configuration and applies its defaults.
func NewDecryptor(cfg DecryptorConfig) (*Decryptor, error) {
	if cfg.Keys == nil {
		return nil, errors.New("a decryptor needs a key reader")
	}
	if cfg.OnFailure < Fail || cfg.OnFailure > Consume {
		return nil, fmt.Errorf("unknown failure action %d", int(cfg.OnFailure))
	}
	if cfg.CacheTTL <= 0 {
		cfg.CacheTTL = DefaultCacheTTL
	}
	if cfg.CacheMaxKeys <= 0 {
		cfg.CacheMaxKeys = DefaultCacheMaxKeys
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Decryptor{cfg: cfg, cache: map[string]*cached{}, order: list.New()}, nil
}

// OnFailure is the configured failure action.
func (d *Decryptor) OnFailure() FailureAction { return d.cfg.OnFailure }

// CachedKeys is how many data keys are held (or being unwrapped) now.
func (d *Decryptor) CachedKeys() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.cache)
}

// AddDataKey puts a data key the application holds into the cache, as if an earlier record had announced it.
func (d *Decryptor) AddDataKey(dataKeyID, key []byte) {
	done := make(chan struct{})
	close(done)
	d.mu.Lock()
	defer d.mu.Unlock()
	c := &cached{id: string(dataKeyID), done: done}
	c.aead, c.aeadErr = newGCM(key) // the key schedule is a copy: the caller may reuse key
	d.insertLocked(c)
}

func (d *Decryptor) insertLocked(c *cached) {
	if old, ok := d.cache[c.id]; ok {
		d.order.Remove(old.elem)
	}
	c.expires = d.cfg.Now().Add(d.cfg.CacheTTL)
	c.elem = d.order.PushBack(c)
	d.cache[c.id] = c
	for len(d.cache) > d.cfg.CacheMaxKeys {
		oldest := d.order.Front().Value.(*cached)
		d.order.Remove(oldest.elem)
		delete(d.cache, oldest.id)
	}
}

func (d *Decryptor) removeLocked(c *cached) {
	if d.cache[c.id] == c {
		d.order.Remove(c.elem)
		delete(d.cache, c.id)
	}
}

func (d *Decryptor) dataKey(ctx context.Context, env *Envelope) (*cached, error) {
	id := string(env.DataKeyID)
	d.mu.Lock()
	c, ok := d.cache[id]
	if ok && !d.cfg.Now().Before(c.expires) {
		d.removeLocked(c)
		ok = false
	}
	if !ok {
		if len(env.WrappedKeys) == 0 {
			d.mu.Unlock()
			return nil, errorf(ReasonUnknownDataKey, "the record references data key %s, announced by an earlier record this consumer has not read (or no longer holds)", hex.EncodeToString(env.DataKeyID))
		}
		c = &cached{id: id, done: make(chan struct{})}
		d.insertLocked(c)
		d.mu.Unlock()
		var key []byte
		key, c.err = d.unwrap(ctx, env)
		if c.err != nil {
			d.mu.Lock()
			d.removeLocked(c)
			d.mu.Unlock()
		} else {
			c.aead, c.aeadErr = newGCM(key)
		}
		close(c.done)
		return c, c.err
	}
	d.mu.Unlock()
	select {
	case <-c.done:
	case <-ctx.Done():
		return nil, &Error{Reason: ReasonUnwrapFailed, Message: "waiting for the data key to unwrap: " + ctx.Err().Error(), Err: ctx.Err()}
	}
	return c, c.err
}

func (d *Decryptor) unwrap(ctx context.Context, env *Envelope) ([]byte, error) {
	var lastErr error
	for _, w := range env.WrappedKeys {
		k, err := d.cfg.Keys.Unwrap(ctx, w, env.DataKeyID)
		if err != nil {
			lastErr = err
			continue
		}
		if k != nil {
			return k, nil
		}
	}
	if lastErr != nil {
		return nil, &Error{Reason: ReasonUnwrapFailed, Err: lastErr, Message: fmt.Sprintf("the data key %s does not unwrap: %v", hex.EncodeToString(env.DataKeyID), lastErr)}
	}
	ids := make([]string, len(env.WrappedKeys))
	for i, w := range env.WrappedKeys {
		ids[i] = w.KeyID
	}
	return nil, errorf(ReasonNoKey, "no private key for any recipient of data key %s (%s)", hex.EncodeToString(env.DataKeyID), strings.Join(ids, ", "))
}

// Open opens a record of topic, whatever the failure action: the plaintext record and StatusDecrypted,
// the record itself and StatusPlaintext when it has no envelope, or an *Error.
func (d *Decryptor) Open(ctx context.Context, topic string, r Record) (Record, Status, error) {
	env, err := EnvelopeOf(r.Headers)
	if err != nil {
		return Record{}, StatusFailed, err
	}
	if env == nil {
		return r, StatusPlaintext, nil
	}
	key, err := d.dataKey(ctx, env)
	if err != nil {
		return Record{}, StatusFailed, err
	}
	out, err := openRecord(r, topic, env, key.aead, key.aeadErr)
	if err != nil {
		return Record{}, StatusFailed, err
	}
	return out, StatusDecrypted, nil
}

// Result is a record read, after the failure action.
type Result struct {
	Status Status
	// Record is the record to deliver: decrypted, plaintext, or (CONSUME) as stored; nil when DISCARD
	// dropped it.
	Record *Record
	// Err is why the record failed (StatusFailed).
	Err *Error
}

// Decrypt opens a record of topic and applies the failure action: FAIL answers the *Error as err.
func (d *Decryptor) Decrypt(ctx context.Context, topic string, r Record) (Result, error) {
	out, status, err := d.Open(ctx, topic, r)
	if err == nil {
		return Result{Status: status, Record: &out}, nil
	}
	e := asError(err)
	switch d.cfg.OnFailure {
	case Discard:
		return Result{Status: StatusFailed, Err: e}, nil
	case Consume:
		return Result{Status: StatusFailed, Record: &r, Err: e}, nil
	}
	return Result{Status: StatusFailed, Err: e}, e
}

// asError is err as an *Error; anything else (a bug, not the record's fault) counts as malformed.
func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Reason: ReasonMalformed, Message: err.Error(), Err: err}
}
