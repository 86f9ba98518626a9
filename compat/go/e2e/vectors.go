package e2e

// The test vectors of test/vectors/e2e (src/crypto/README.md, "Test vectors"), checked by `go test` and by
// the e2etool's `vectors` command alike.

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdh"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type vectorHeader struct {
	Key   string  `json:"key"`
	Value *string `json:"value"`
}

type vectorRecord struct {
	Key     *string        `json:"key"`
	Value   *string        `json:"value"`
	Headers []vectorHeader `json:"headers"`
}

type vectorRecipient struct {
	KeyID                  string `json:"keyId"`
	Type                   string `json:"type"`
	PrivateKeyPem          string `json:"privateKeyPem"`
	PublicKeyPem           string `json:"publicKeyPem"`
	Wrapped                string `json:"wrapped"`
	EphemeralPrivateKeyPem string `json:"ephemeralPrivateKeyPem"`
	WrapNonce              string `json:"wrapNonce"`
}

type vector struct {
	Format      string        `json:"format"`
	Kind        string        `json:"kind"`
	Name        string        `json:"name"`
	Topic       string        `json:"topic"`
	Input       *vectorRecord `json:"input"`
	Output      *vectorRecord `json:"output"`
	SealHeaders []string      `json:"sealHeaders"`
	Pseudonym   *struct {
		KeyID  string `json:"keyId"`
		Secret string `json:"secret"`
	} `json:"pseudonym"`
	DataKey       string            `json:"dataKey"`
	DataKeyID     string            `json:"dataKeyId"`
	NonceBase     string            `json:"nonceBase"`
	Reference     bool              `json:"reference"`
	Recipients    []vectorRecipient `json:"recipients"`
	Record        *vectorRecord     `json:"record"`
	KnownDataKeys []struct {
		DataKeyID string `json:"dataKeyId"`
		DataKey   string `json:"dataKey"`
	} `json:"knownDataKeys"`
	Error  *string       `json:"error"`
	Expect *vectorRecord `json:"expect"`
}

func unhex(s string) ([]byte, error) {
	if s == "" {
		return []byte{}, nil
	}
	return hex.DecodeString(s)
}

func unhexOrNull(s *string) ([]byte, error) {
	if s == nil {
		return nil, nil
	}
	return unhex(*s)
}

func (v *vectorRecord) record() (Record, error) {
	if v == nil {
		return Record{}, errors.New("a record is missing")
	}
	var r Record
	var err error
	if r.Key, err = unhexOrNull(v.Key); err != nil {
		return Record{}, err
	}
	if r.Value, err = unhexOrNull(v.Value); err != nil {
		return Record{}, err
	}
	r.Headers = make([]Header, 0, len(v.Headers))
	for _, h := range v.Headers {
		b, err := unhexOrNull(h.Value)
		if err != nil {
			return Record{}, err
		}
		r.Headers = append(r.Headers, Header{Key: h.Key, Value: b})
	}
	return r, nil
}

func sameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

func hexOrNull(b []byte) string {
	if b == nil {
		return "null"
	}
	return hex.EncodeToString(b)
}

// DiffRecords says how two records differ ("" when they are the same, null and empty told apart).
func DiffRecords(got, want Record) string {
	var d []string
	if !sameBytes(got.Key, want.Key) {
		d = append(d, fmt.Sprintf("key %s, want %s", hexOrNull(got.Key), hexOrNull(want.Key)))
	}
	if !sameBytes(got.Value, want.Value) {
		d = append(d, fmt.Sprintf("value %.80s, want %.80s", hexOrNull(got.Value), hexOrNull(want.Value)))
	}
	if len(got.Headers) != len(want.Headers) {
		d = append(d, fmt.Sprintf("%d headers, want %d", len(got.Headers), len(want.Headers)))
	} else {
		for i := range got.Headers {
			g, w := got.Headers[i], want.Headers[i]
			if g.Key != w.Key || !sameBytes(g.Value, w.Value) {
				d = append(d, fmt.Sprintf("header %d %q=%.80s, want %q=%.80s", i, g.Key, hexOrNull(g.Value), w.Key, hexOrNull(w.Value)))
			}
		}
	}
	return strings.Join(d, "; ")
}

// CheckVector checks one vector file's contents: nil when the implementation reproduces it.
func CheckVector(data []byte) error {
	var v vector
	if err := json.Unmarshal(data, &v); err != nil {
		return fmt.Errorf("not a vector: %w", err)
	}
	if v.Format != "ledgerline-e2e/1" {
		return fmt.Errorf("unknown vector format %q", v.Format)
	}
	switch v.Kind {
	case "seal":
		return checkSeal(&v)
	case "open":
		return checkOpen(&v)
	}
	return fmt.Errorf("unknown vector kind %q", v.Kind)
}

func checkSeal(v *vector) error {
	ctx := context.Background()
	input, err := v.Input.record()
	if err != nil {
		return fmt.Errorf("input: %w", err)
	}
	output, err := v.Output.record()
	if err != nil {
		return fmt.Errorf("output: %w", err)
	}
	dataKey, err := unhex(v.DataKey)
	if err != nil {
		return err
	}
	dataKeyID, err := unhex(v.DataKeyID)
	if err != nil {
		return err
	}
	nonceBase, err := unhex(v.NonceBase)
	if err != nil {
		return err
	}
	keys := &StaticKeys{Private: map[string]crypto.PrivateKey{}}
	var wrapped []WrappedKey
	for _, r := range v.Recipients {
		want, err := unhex(r.Wrapped)
		if err != nil {
			return err
		}
		priv, err := ParsePrivateKeyPEM([]byte(r.PrivateKeyPem))
		if err != nil {
			return fmt.Errorf("recipient %s's private key: %w", r.KeyID, err)
		}
		keys.Private[r.KeyID] = priv
		pub, err := ParsePublicKeyPEM([]byte(r.PublicKeyPem))
		if err != nil {
			return fmt.Errorf("recipient %s's public key: %w", r.KeyID, err)
		}
		alg, err := WrapAlgorithmOf(pub)
		if err != nil {
			return err
		}
		if r.Type == "x25519" {
			ephAny, err := ParsePrivateKeyPEM([]byte(r.EphemeralPrivateKeyPem))
			if err != nil {
				return fmt.Errorf("recipient %s's ephemeral key: %w", r.KeyID, err)
			}
			eph, ok := ephAny.(*ecdh.PrivateKey)
			if !ok {
				return fmt.Errorf("recipient %s's ephemeral key is not X25519", r.KeyID)
			}
			nonce, err := unhex(r.WrapNonce)
			if err != nil {
				return err
			}
			var got []byte
			if alg, got, err = WrapDataKey(pub, r.KeyID, dataKeyID, dataKey, &WrapRandomness{Ephemeral: eph, Nonce: nonce}); err != nil {
				return fmt.Errorf("wrapping for %s: %w", r.KeyID, err)
			}
			if !bytes.Equal(got, want) {
				return fmt.Errorf("the X25519 wrap for %s is %x, want %x", r.KeyID, got, want)
			}
		}
		wrapped = append(wrapped, WrappedKey{KeyID: r.KeyID, Algorithm: alg, Wrapped: want})
		// (2) every recipient unwraps the data key.
		got, err := UnwrapDataKey(priv, r.KeyID, alg, dataKeyID, want)
		if err != nil {
			return fmt.Errorf("unwrapping for %s: %w", r.KeyID, err)
		}
		if !bytes.Equal(got, dataKey) {
			return fmt.Errorf("%s unwraps %x, want the data key %x", r.KeyID, got, dataKey)
		}
	}
	p := SealParams{Topic: v.Topic, DataKeyID: dataKeyID, DataKey: dataKey, NonceBase: nonceBase, SealHeaders: v.SealHeaders}
	if !v.Reference {
		p.WrappedKeys = wrapped
	}
	if v.Pseudonym != nil {
		secret, err := unhex(v.Pseudonym.Secret)
		if err != nil {
			return err
		}
		p.Pseudonym = &Pseudonym{KeyID: v.Pseudonym.KeyID, Secret: secret}
	}
	// (1) sealing gives the output exactly.
	sealed, err := SealRecord(input, p)
	if err != nil {
		return fmt.Errorf("sealing: %w", err)
	}
	if d := DiffRecords(sealed, output); d != "" {
		return fmt.Errorf("sealed record differs: %s", d)
	}
	// (3) opening gives the input back, clear headers first, then the sealed ones.
	dec, err := NewDecryptor(DecryptorConfig{Keys: keys})
	if err != nil {
		return err
	}
	if v.Reference {
		dec.AddDataKey(dataKeyID, dataKey)
	}
	opened, status, err := dec.Open(ctx, v.Topic, output)
	if err != nil {
		return fmt.Errorf("opening: %w", err)
	}
	if status != StatusDecrypted {
		return fmt.Errorf("opening gave status %s", status)
	}
	want := Record{Key: input.Key, Value: input.Value}
	for _, sealedToo := range []bool{false, true} {
		for _, h := range input.Headers {
			if contains(v.SealHeaders, h.Key) == sealedToo {
				want.Headers = append(want.Headers, h)
			}
		}
	}
	if d := DiffRecords(opened, want); d != "" {
		return fmt.Errorf("opened record differs: %s", d)
	}
	return nil
}

func checkOpen(v *vector) error {
	record, err := v.Record.record()
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	keys := &StaticKeys{Private: map[string]crypto.PrivateKey{}}
	for _, r := range v.Recipients {
		priv, err := ParsePrivateKeyPEM([]byte(r.PrivateKeyPem))
		if err != nil {
			return fmt.Errorf("recipient %s's private key: %w", r.KeyID, err)
		}
		keys.Private[r.KeyID] = priv
	}
	dec, err := NewDecryptor(DecryptorConfig{Keys: keys})
	if err != nil {
		return err
	}
	for _, k := range v.KnownDataKeys {
		id, err := unhex(k.DataKeyID)
		if err != nil {
			return err
		}
		key, err := unhex(k.DataKey)
		if err != nil {
			return err
		}
		dec.AddDataKey(id, key)
	}
	opened, _, err := dec.Open(context.Background(), v.Topic, record)
	if v.Error != nil && *v.Error != "" {
		if err == nil {
			return fmt.Errorf("opened, want failure %s", *v.Error)
		}
		var e *Error
		if !errors.As(err, &e) {
			return fmt.Errorf("failed with %v, not an *e2e.Error with reason %s", err, *v.Error)
		}
		if string(e.Reason) != *v.Error {
			return fmt.Errorf("failed with reason %s (%s), want %s", e.Reason, e.Message, *v.Error)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("opening: %w", err)
	}
	want, err := v.Expect.record()
	if err != nil {
		return fmt.Errorf("expect: %w", err)
	}
	if d := DiffRecords(opened, want); d != "" {
		return fmt.Errorf("opened record differs: %s", d)
	}
	return nil
}

// VectorResult is one vector file checked.
type VectorResult struct {
	File string // base name
	Err  error
}

// CheckVectorDir checks every *.json file of dir, in name order.
func CheckVectorDir(dir string) ([]VectorResult, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	out := make([]VectorResult, 0, len(files))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err == nil {
			err = CheckVector(data)
		}
		out = append(out, VectorResult{File: filepath.Base(f), Err: err})
	}
	return out, nil
}
