package e2e

import (
	"bytes"
	"context"
	"crypto"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func staticKeys(t *testing.T, ids map[string]crypto.PrivateKey) *StaticKeys {
	k := &StaticKeys{Public: map[string]crypto.PublicKey{}, Private: map[string]crypto.PrivateKey{}, Secrets: map[string][]byte{"names": bytes.Repeat([]byte{4}, 32)}}
	for id, p := range ids {
		k.Public[id] = publicOf(p)
		k.Private[id] = p
	}
	return k
}

func mustEnvelope(t *testing.T, r Record) *Envelope {
	t.Helper()
	e, err := EnvelopeOf(r.Headers)
	if err != nil || e == nil {
		t.Fatalf("envelope: %v %v", e, err)
	}
	return e
}

func sample(i int) Record {
	return Record{Key: fmt.Appendf(nil, "k%d", i%7), Value: fmt.Appendf(nil, "v:%d", i), Headers: []Header{{Key: "n", Value: fmt.Appendf(nil, "%d", i)}, {Key: "h-secret", Value: fmt.Appendf(nil, "s%d", i)}}}
}

// TestEncryptorRotatesByCountAndAge: a new data key after RotateAfterRecords records and after RotateAfter.
func TestEncryptorRotatesByCountAndAge(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Unix(1000, 0)}
	keys := staticKeys(t, map[string]crypto.PrivateKey{"x": testX25519(t)})
	enc, err := NewEncryptor(EncryptorConfig{Keys: keys, Recipients: []string{"x"}, RotateAfterRecords: 3, RotateAfter: time.Minute, Now: clock.now})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	nonces := map[string]bool{}
	for i := 0; i < 7; i++ {
		if i == 6 {
			clock.add(time.Minute)
		}
		out, err := enc.Encrypt(ctx, "t", sample(i))
		if err != nil {
			t.Fatal(err)
		}
		e := mustEnvelope(t, out)
		ids = append(ids, string(e.DataKeyID))
		nonces[string(e.NonceBase)] = true
		if len(e.WrappedKeys) != 1 {
			t.Fatalf("record %d carries %d wrapped keys, want 1 (AnnounceEvery 1)", i, len(e.WrappedKeys))
		}
	}
	if !(ids[0] == ids[1] && ids[1] == ids[2] && ids[2] != ids[3] && ids[3] == ids[4] && ids[4] == ids[5] && ids[5] != ids[6]) {
		t.Fatalf("data key ids by record: %x", ids)
	}
	if len(nonces) != 7 {
		t.Fatalf("%d distinct nonce bases for 7 records", len(nonces))
	}
	enc.Rotate()
	out, _ := enc.Encrypt(ctx, "t", sample(7))
	if string(mustEnvelope(t, out).DataKeyID) == ids[6] {
		t.Fatal("Rotate kept the data key")
	}
}

func TestEncryptorDefaultsAndCap(t *testing.T) {
	keys := staticKeys(t, map[string]crypto.PrivateKey{"x": testX25519(t)})
	enc, err := NewEncryptor(EncryptorConfig{Keys: keys, Recipients: []string{"x"}})
	if err != nil {
		t.Fatal(err)
	}
	if enc.cfg.RotateAfter != time.Hour || enc.cfg.RotateAfterRecords != 1_000_000 || enc.cfg.AnnounceEvery != 1 {
		t.Fatalf("defaults %+v", enc.cfg)
	}
	enc, _ = NewEncryptor(EncryptorConfig{Keys: keys, Recipients: []string{"x"}, RotateAfterRecords: 1 << 40})
	if enc.cfg.RotateAfterRecords != 1<<30 {
		t.Fatalf("cap %d", enc.cfg.RotateAfterRecords)
	}
	if _, err := NewEncryptor(EncryptorConfig{Keys: keys}); err == nil {
		t.Fatal("no recipients accepted")
	}
}

// TestEncryptorAnnouncesEveryNthRecordPerTopic and a consumer that missed the announcement gets
// unknown-data-key, one that read it decrypts the references.
func TestEncryptorAnnouncesEveryNthRecordPerTopic(t *testing.T) {
	ctx := context.Background()
	keys := staticKeys(t, map[string]crypto.PrivateKey{"x": testX25519(t)})
	enc, _ := NewEncryptor(EncryptorConfig{Keys: keys, Recipients: []string{"x"}, AnnounceEvery: 3})
	var a []Record
	for i := 0; i < 6; i++ {
		out, err := enc.Encrypt(ctx, "a", sample(i))
		if err != nil {
			t.Fatal(err)
		}
		a = append(a, out)
		if i == 1 {
			b, _ := enc.Encrypt(ctx, "b", sample(i))
			if len(mustEnvelope(t, b).WrappedKeys) != 1 {
				t.Fatal("the first record of another topic does not announce")
			}
		}
	}
	for i, r := range a {
		if got, want := len(mustEnvelope(t, r).WrappedKeys) > 0, i%3 == 0; got != want {
			t.Fatalf("record %d announces %v, want %v", i, got, want)
		}
	}
	late, _ := NewDecryptor(DecryptorConfig{Keys: keys})
	_, _, err := late.Open(ctx, "a", a[1])
	var e *Error
	if !errors.As(err, &e) || e.Reason != ReasonUnknownDataKey {
		t.Fatalf("reference without the announcement: %v", err)
	}
	dec, _ := NewDecryptor(DecryptorConfig{Keys: keys})
	for i, r := range a {
		out, status, err := dec.Open(ctx, "a", r)
		if err != nil || status != StatusDecrypted || DiffRecords(out, sample(i)) != "" {
			t.Fatalf("record %d: %v %v %s", i, status, err, DiffRecords(out, sample(i)))
		}
	}
}

func TestEncryptorIsSafeForConcurrentUse(t *testing.T) {
	ctx := context.Background()
	keys := staticKeys(t, map[string]crypto.PrivateKey{"x": testX25519(t)})
	enc, _ := NewEncryptor(EncryptorConfig{Keys: keys, Recipients: []string{"x"}, RotateAfterRecords: 10})
	dec, _ := NewDecryptor(DecryptorConfig{Keys: keys})
	var wg sync.WaitGroup
	perKey := sync.Map{}
	errs := make(chan error, 400)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				out, err := enc.Encrypt(ctx, "t", sample(i))
				if err != nil {
					errs <- err
					return
				}
				id := string(mustEnvelope(t, out).DataKeyID)
				perKey.Store(id, true)
				if back, _, err := dec.Open(ctx, "t", out); err != nil || DiffRecords(back, sample(i)) != "" {
					errs <- fmt.Errorf("open: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	keysUsed := 0
	perKey.Range(func(any, any) bool { keysUsed++; return true })
	if keysUsed != 40 {
		t.Fatalf("400 records under %d data keys, want 40 (10 records each)", keysUsed)
	}
}

func TestPseudonymAndSealedHeaders(t *testing.T) {
	ctx := context.Background()
	keys := staticKeys(t, map[string]crypto.PrivateKey{"x": testX25519(t)})
	enc, _ := NewEncryptor(EncryptorConfig{Keys: keys, Recipients: []string{"x"}, PseudonymKeyID: "names", SealHeaders: []string{"h-secret"}})
	a, _ := enc.Encrypt(ctx, "t", sample(0))
	b, _ := enc.Encrypt(ctx, "t", sample(7))
	tomb, err := enc.Encrypt(ctx, "t", Record{Key: []byte("k0")})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Key, b.Key) || !bytes.Equal(a.Key, tomb.Key) || len(a.Key) != 32 || bytes.Equal(a.Key, []byte("k0")) {
		t.Fatalf("pseudonyms %x %x %x", a.Key, b.Key, tomb.Key)
	}
	if !bytes.Equal(a.Key, PseudonymOf(bytes.Repeat([]byte{4}, 32), []byte("k0"))) {
		t.Fatal("the pseudonym is not HMAC-SHA256(secret, key)")
	}
	if tomb.Value != nil {
		t.Fatal("a tombstone got a value")
	}
	if len(a.Headers) != 2 || a.Headers[0].Key != "n" || a.Headers[1].Key != EnvelopeHeader {
		t.Fatalf("stored headers %+v", a.Headers)
	}
	if e := mustEnvelope(t, a); e.PseudonymKeyID != "names" || e.SealedHeaders == nil || e.SealedKey == nil {
		t.Fatalf("envelope %+v", e)
	}
	nullKey, _ := enc.Encrypt(ctx, "t", Record{Value: []byte("v")})
	if nullKey.Key != nil || mustEnvelope(t, nullKey).PseudonymKeyID != "" {
		t.Fatal("a null key became a pseudonym")
	}
	dec, _ := NewDecryptor(DecryptorConfig{Keys: &StaticKeys{Private: keys.Private}})
	for _, c := range []struct{ stored, want Record }{{a, sample(0)}, {tomb, Record{Key: []byte("k0"), Headers: []Header{}}}, {nullKey, Record{Value: []byte("v"), Headers: []Header{}}}} {
		got, _, err := dec.Open(ctx, "t", c.stored)
		if err != nil {
			t.Fatal(err)
		}
		if d := DiffRecords(got, c.want); d != "" {
			t.Fatal(d)
		}
	}
	if _, err := enc.Encrypt(ctx, "t", a); err == nil {
		t.Fatal("a record with an envelope was sealed again")
	}
}

// TestDecryptorFailureActions: FAIL answers the error, DISCARD drops, CONSUME delivers the record as stored.
func TestDecryptorFailureActions(t *testing.T) {
	ctx := context.Background()
	keys := staticKeys(t, map[string]crypto.PrivateKey{"x": testX25519(t)})
	enc, _ := NewEncryptor(EncryptorConfig{Keys: keys, Recipients: []string{"x"}})
	stored, _ := enc.Encrypt(ctx, "t", sample(1))
	nobody := &StaticKeys{}
	for _, action := range []FailureAction{Fail, Discard, Consume} {
		dec, _ := NewDecryptor(DecryptorConfig{Keys: nobody, OnFailure: action})
		res, err := dec.Decrypt(ctx, "t", stored)
		if res.Status != StatusFailed || res.Err == nil || res.Err.Reason != ReasonNoKey {
			t.Fatalf("%s: %+v", action, res)
		}
		switch action {
		case Fail:
			var e *Error
			if !errors.As(err, &e) || e.Reason != ReasonNoKey || res.Record != nil {
				t.Fatalf("FAIL: %v %+v", err, res)
			}
		case Discard:
			if err != nil || res.Record != nil {
				t.Fatalf("DISCARD: %v %+v", err, res)
			}
		case Consume:
			if err != nil || res.Record == nil || DiffRecords(*res.Record, stored) != "" {
				t.Fatalf("CONSUME: %v %+v", err, res)
			}
		}
	}
	dec, _ := NewDecryptor(DecryptorConfig{Keys: nobody})
	plain := sample(2)
	if res, err := dec.Decrypt(ctx, "t", plain); err != nil || res.Status != StatusPlaintext || DiffRecords(*res.Record, plain) != "" {
		t.Fatalf("plaintext: %+v %v", res, err)
	}
	if a, err := ParseFailureAction("consume"); err != nil || a != Consume {
		t.Fatal(a, err)
	}
}

// countingKeys counts unwraps and fails them for ids in failing.
type countingKeys struct {
	KeyReader
	mu      sync.Mutex
	unwraps int
	failing bool
}

func (c *countingKeys) Unwrap(ctx context.Context, w WrappedKey, id []byte) ([]byte, error) {
	c.mu.Lock()
	c.unwraps++
	failing := c.failing
	c.mu.Unlock()
	if failing {
		return nil, errors.New("the KMS refuses")
	}
	return c.KeyReader.Unwrap(ctx, w, id)
}

func TestDecryptorCacheIsBoundedByTimeAndCount(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Unix(5000, 0)}
	keys := staticKeys(t, map[string]crypto.PrivateKey{"x": testX25519(t)})
	enc, _ := NewEncryptor(EncryptorConfig{Keys: keys, Recipients: []string{"x"}, RotateAfterRecords: 1})
	var recs []Record
	for i := 0; i < 4; i++ {
		r, _ := enc.Encrypt(ctx, "t", sample(i))
		recs = append(recs, r)
	}
	ck := &countingKeys{KeyReader: keys}
	dec, _ := NewDecryptor(DecryptorConfig{Keys: ck, CacheTTL: time.Minute, CacheMaxKeys: 2, Now: clock.now})
	open := func(i int) {
		t.Helper()
		if _, _, err := dec.Open(ctx, "t", recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	open(0)
	open(0)
	if ck.unwraps != 1 {
		t.Fatalf("%d unwraps for one data key read twice", ck.unwraps)
	}
	open(1)
	open(2)
	if dec.CachedKeys() != 2 {
		t.Fatalf("%d keys cached, max 2", dec.CachedKeys())
	}
	open(0) // evicted as the oldest: unwrapped again
	if ck.unwraps != 4 {
		t.Fatalf("%d unwraps, want 4", ck.unwraps)
	}
	clock.add(time.Minute)
	open(0)
	if ck.unwraps != 5 {
		t.Fatalf("%d unwraps after the TTL, want 5", ck.unwraps)
	}
	if d, _ := NewDecryptor(DecryptorConfig{Keys: keys}); d.cfg.CacheTTL != 10*time.Minute || d.cfg.CacheMaxKeys != 1000 {
		t.Fatalf("defaults %+v", d.cfg)
	}
	// A failed unwrap is unwrap-failed and is not cached.
	ck.failing = true
	_, _, err := dec.Open(ctx, "t", recs[3])
	var e *Error
	if !errors.As(err, &e) || e.Reason != ReasonUnwrapFailed {
		t.Fatalf("a KMS refusal: %v", err)
	}
	ck.failing = false
	open(3)
}

func TestDecryptorTriesEveryRecipient(t *testing.T) {
	ctx := context.Background()
	a, b := testX25519(t), testRSA(t)
	keys := staticKeys(t, map[string]crypto.PrivateKey{"a": a, "b": b})
	enc, _ := NewEncryptor(EncryptorConfig{Keys: keys, Recipients: []string{"a", "b"}})
	stored, _ := enc.Encrypt(ctx, "t", sample(3))
	for _, id := range []string{"a", "b"} {
		dec, _ := NewDecryptor(DecryptorConfig{Keys: &StaticKeys{Private: map[string]crypto.PrivateKey{id: keys.Private[id]}}})
		if got, _, err := dec.Open(ctx, "t", stored); err != nil || DiffRecords(got, sample(3)) != "" {
			t.Fatalf("holding only %s: %v", id, err)
		}
	}
	// Holding the wrong private key under a recipient's id: unwrap-failed.
	dec, _ := NewDecryptor(DecryptorConfig{Keys: &StaticKeys{Private: map[string]crypto.PrivateKey{"a": testX25519(t)}}})
	_, _, err := dec.Open(ctx, "t", stored)
	var e *Error
	if !errors.As(err, &e) || e.Reason != ReasonUnwrapFailed {
		t.Fatalf("wrong key: %v", err)
	}
}
