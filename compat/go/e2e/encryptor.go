package e2e

// The producer side (README, "Producing"): one data key at a time, rotated by age and by record count,
// wrapped once per recipient when it is made (as Pulsar's MessageCrypto does per key rotation), and a
// fresh random nonce base for every record. Recipient names are resolved when a data key is made, so a
// recipient rotated with `ledgerline keys rotate` is used from the next data key on.
//
// Nonce budget: a record uses up to three nonces derived from one random 96-bit base, so a data key seals
// at most 2^30 records (3 x 2^30 < 2^32 random nonces, NIST SP 800-38D's bound for random IVs).

import (
	"context"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// MaxRecordsPerDataKey caps EncryptorConfig.RotateAfterRecords.
const MaxRecordsPerDataKey = 1 << 30

const (
	DefaultRotateAfter        = time.Hour
	DefaultRotateAfterRecords = 1_000_000
)

// EncryptorConfig configures an Encryptor. Keys and Recipients are required.
type EncryptorConfig struct {
	Keys KeyReader
	// Recipients are key ids or names (resolved to their newest version); 1 to 255.
	Recipients []string
	// PseudonymKeyID, when set, replaces record keys by HMAC-SHA256 pseudonyms under this secret.
	PseudonymKeyID string
	// SealHeaders names the headers sealed with the value.
	SealHeaders []string
	// RotateAfter is a data key's longest life; default 1 hour.
	RotateAfter time.Duration
	// RotateAfterRecords is how many records a data key seals at most; default 1,000,000, at most 2^30.
	RotateAfterRecords int
	// AnnounceEvery carries the wrapped data key in every n-th record of a topic and references it in
	// between; default 1 (every record carries it, which compacted topics and consumers starting anywhere
	// need).
	AnnounceEvery int
	// Now and Rand replace the clock and crypto/rand (tests).
	Now  func() time.Time
	Rand io.Reader
}

type dataKey struct {
	id, key   []byte
	aead      cipher.AEAD // key's AES-256-GCM, made once for every record it seals
	wrapped   []WrappedKey
	madeAt    time.Time
	sealed    int
	announced map[string]int // records since the last announcement, per topic
}

// Encryptor seals records; safe for concurrent use.
type Encryptor struct {
	cfg EncryptorConfig

	mu        sync.Mutex
	current   *dataKey
	pseudonym *Pseudonym
	// nonces holds nonce bases drawn from Rand in blocks (one read per noncesPerRead records rather than
	// one per record); each is handed out once.
	nonces []byte
}

const noncesPerRead = 256

// NewEncryptor checks the configuration and applies its defaults. Keys are read at the first record.
func NewEncryptor(cfg EncryptorConfig) (*Encryptor, error) {
	if cfg.Keys == nil {
		return nil, errors.New("an encryptor needs a key reader")
	}
	if len(cfg.Recipients) == 0 {
		return nil, errors.New("an encryptor needs at least one recipient")
	}
	if len(cfg.Recipients) > 255 {
		return nil, errors.New("at most 255 recipients")
	}
	if cfg.RotateAfter < 0 || cfg.RotateAfterRecords < 0 {
		return nil, errors.New("rotation bounds must be positive")
	}
	if cfg.RotateAfter == 0 {
		cfg.RotateAfter = DefaultRotateAfter
	}
	if cfg.RotateAfterRecords == 0 {
		cfg.RotateAfterRecords = DefaultRotateAfterRecords
	}
	cfg.RotateAfterRecords = min(cfg.RotateAfterRecords, MaxRecordsPerDataKey)
	cfg.AnnounceEvery = max(cfg.AnnounceEvery, 1)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Reader
	}
	cfg.Recipients = append([]string(nil), cfg.Recipients...)
	cfg.SealHeaders = append([]string(nil), cfg.SealHeaders...)
	return &Encryptor{cfg: cfg}, nil
}

// Rotate makes the next record use a new data key (a rotation ahead of the bounds).
func (e *Encryptor) Rotate() {
	e.mu.Lock()
	e.current = nil
	e.mu.Unlock()
}

func (e *Encryptor) random(n int) ([]byte, error) {
	b := make([]byte, n)
	_, err := io.ReadFull(e.cfg.Rand, b)
	return b, err
}

func (e *Encryptor) makeDataKey(ctx context.Context) (*dataKey, error) {
	id, err := e.random(DataKeyIDBytes)
	if err != nil {
		return nil, err
	}
	key, err := e.random(DataKeyBytes)
	if err != nil {
		return nil, err
	}
	wrapped := make([]WrappedKey, 0, len(e.cfg.Recipients))
	for _, name := range e.cfg.Recipients {
		pub, err := e.cfg.Keys.PublicKey(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("the public key of recipient %s: %w", name, err)
		}
		if pub == nil {
			return nil, fmt.Errorf("no public key for recipient %s", name)
		}
		alg, w, err := WrapDataKey(pub.Key, pub.KeyID, id, key, &WrapRandomness{Rand: e.cfg.Rand})
		if err != nil {
			return nil, fmt.Errorf("wrapping for recipient %s: %w", pub.KeyID, err)
		}
		wrapped = append(wrapped, WrappedKey{KeyID: pub.KeyID, Algorithm: alg, Wrapped: w})
	}
	aead, err := newGCM(key)
	if err != nil {
		return nil, err
	}
	return &dataKey{id: id, key: key, aead: aead, wrapped: wrapped, madeAt: e.cfg.Now(), announced: map[string]int{}}, nil
}

// nonceBase hands out a fresh random nonce base; e.mu is held.
func (e *Encryptor) nonceBase() ([]byte, error) {
	if len(e.nonces) == 0 {
		block, err := e.random(NonceBytes * noncesPerRead)
		if err != nil {
			return nil, err
		}
		e.nonces = block
	}
	n := e.nonces[:NonceBytes:NonceBytes]
	e.nonces = e.nonces[NonceBytes:]
	return n, nil
}

// next hands out the data key for one more record of topic, counted against its bounds, whether this
// record announces it, and the record's nonce base.
func (e *Encryptor) next(ctx context.Context, topic string) (*dataKey, bool, *Pseudonym, []byte, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.pseudonym == nil && e.cfg.PseudonymKeyID != "" {
		s, err := e.cfg.Keys.Secret(ctx, e.cfg.PseudonymKeyID)
		if err != nil {
			return nil, false, nil, nil, fmt.Errorf("the pseudonym secret %s: %w", e.cfg.PseudonymKeyID, err)
		}
		if s == nil {
			return nil, false, nil, nil, fmt.Errorf("no pseudonym secret %s", e.cfg.PseudonymKeyID)
		}
		e.pseudonym = s
	}
	k := e.current
	if k == nil || k.sealed >= e.cfg.RotateAfterRecords || e.cfg.Now().Sub(k.madeAt) >= e.cfg.RotateAfter {
		var err error
		if k, err = e.makeDataKey(ctx); err != nil {
			return nil, false, nil, nil, err
		}
		e.current = k
	}
	nonceBase, err := e.nonceBase()
	if err != nil {
		return nil, false, nil, nil, err
	}
	k.sealed++
	since, seen := k.announced[topic]
	announce := !seen || since+1 >= e.cfg.AnnounceEvery
	if announce {
		k.announced[topic] = 0
	} else {
		k.announced[topic] = since + 1
	}
	return k, announce, e.pseudonym, nonceBase, nil
}

// Encrypt is the stored form of one record of topic. The input is not changed.
func (e *Encryptor) Encrypt(ctx context.Context, topic string, r Record) (Record, error) {
	for _, h := range r.Headers {
		if h.Key == EnvelopeHeader {
			return Record{}, errorf(ReasonMalformed, "the record already has a %s header", EnvelopeHeader)
		}
	}
	k, announce, pseudonym, nonceBase, err := e.next(ctx, topic)
	if err != nil {
		return Record{}, err
	}
	p := SealParams{Topic: topic, DataKeyID: k.id, DataKey: k.key, NonceBase: nonceBase, Pseudonym: pseudonym, SealHeaders: e.cfg.SealHeaders, aead: k.aead}
	if announce {
		p.WrappedKeys = k.wrapped
	}
	return SealRecord(r, p)
}
