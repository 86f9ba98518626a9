package e2e

// Key readers: where producers find recipients' public keys and pseudonym secrets, and consumers unwrap
// data keys (README, "Keys"). A KeyReader is also what a KMS implements: Unwrap gets the wrapped bytes, so
// a private key may stay inside the KMS.
//
// A name without a version ("orders") resolves to its newest version ("orders.v3"; the unversioned name
// counts as version 0); envelopes always carry the exact id, so consumers holding older private keys go on
// reading older records.

import (
	"context"
	"crypto"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// PublicKey is a recipient's public key (*rsa.PublicKey or an X25519 *ecdh.PublicKey) with the exact key
// id its name resolved to.
type PublicKey struct {
	KeyID string
	Key   crypto.PublicKey
}

// KeyReader supplies keys. Each method answers nil and a nil error for a key it does not know.
type KeyReader interface {
	// PublicKey resolves a recipient name (or exact id) to its newest public key.
	PublicKey(ctx context.Context, name string) (*PublicKey, error)
	// Unwrap answers the data key w wraps; nil, nil when this reader holds no private key for w.KeyID;
	// an error when it holds one and unwrapping fails.
	Unwrap(ctx context.Context, w WrappedKey, dataKeyID []byte) ([]byte, error)
	// Secret resolves a pseudonym secret name (or exact id) to its newest secret.
	Secret(ctx context.Context, name string) (*Pseudonym, error)
}

var versioned = regexp.MustCompile(`^(.*)\.v([0-9]+)$`)

// NewestVersion is the newest version of name among ids: name.v<N> with the largest N, the unversioned
// name counting as version 0; "" when there is none. A versioned id ("orders.v2") resolves to itself.
func NewestVersion(ids []string, name string) string {
	best, bestVersion := "", int64(-1)
	for _, id := range ids {
		version := int64(-1)
		if id == name {
			version = 0
		} else if m := versioned.FindStringSubmatch(id); m != nil && m[1] == name {
			if v, err := strconv.ParseInt(m[2], 10, 64); err == nil {
				version = v
			}
		}
		if version > bestVersion {
			best, bestVersion = id, version
		}
	}
	return best
}

// ParsePublicKeyPEM reads an SPKI ("PUBLIC KEY") PEM block of an RSA or X25519 key (PKCS#1 "RSA PUBLIC
// KEY" too).
func ParsePublicKeyPEM(text []byte) (crypto.PublicKey, error) {
	return parseKeyPEM(text, "a public key is a PUBLIC KEY PEM block", map[string]func([]byte) (any, error){
		"PUBLIC KEY":     x509.ParsePKIXPublicKey,
		"RSA PUBLIC KEY": func(b []byte) (any, error) { return x509.ParsePKCS1PublicKey(b) },
	})
}

// ParsePrivateKeyPEM reads a PKCS#8 ("PRIVATE KEY") PEM block of an RSA or X25519 key (PKCS#1 "RSA
// PRIVATE KEY" too).
func ParsePrivateKeyPEM(text []byte) (crypto.PrivateKey, error) {
	return parseKeyPEM(text, "a private key is a PRIVATE KEY PEM block", map[string]func([]byte) (any, error){
		"PRIVATE KEY":     x509.ParsePKCS8PrivateKey,
		"RSA PRIVATE KEY": func(b []byte) (any, error) { return x509.ParsePKCS1PrivateKey(b) },
	})
}

// parseKeyPEM decodes the first PEM block of text with the parser its type names, and accepts only keys a
// recipient can have (RSA or X25519).
func parseKeyPEM(text []byte, expected string, parsers map[string]func([]byte) (any, error)) (any, error) {
	block, _ := pem.Decode(text)
	if block == nil {
		return nil, errors.New("no PEM block")
	}
	parse, ok := parsers[block.Type]
	if !ok {
		return nil, fmt.Errorf("%s, not %s", expected, block.Type)
	}
	key, err := parse(block.Bytes)
	if err != nil {
		return nil, err
	}
	if _, err := WrapAlgorithmOf(key); err != nil {
		return nil, err
	}
	return key, nil
}

// ParseSecret reads a base64 pseudonym secret (surrounding white space ignored).
func ParseSecret(text []byte) ([]byte, error) {
	s, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(text)))
	if err != nil {
		return nil, fmt.Errorf("a pseudonym secret is base64: %w", err)
	}
	if len(s) == 0 {
		return nil, errors.New("a pseudonym secret is empty")
	}
	return s, nil
}

// PemDirectory reads a key directory: <id>.pub.pem (SPKI), <id>.pem (PKCS#8), <id>.secret (base64). The
// directory is listed again at most every Refresh (default 30 s) so that rotations are seen. Only names
// in the listing are opened, so a key id from an envelope never reaches outside the directory.
type PemDirectory struct {
	Dir     string
	Refresh time.Duration

	mu       sync.Mutex
	listedAt time.Time
	files    map[string]bool
	private  map[string]crypto.PrivateKey
}

// NewPemDirectory reads keys from dir.
func NewPemDirectory(dir string) *PemDirectory {
	return &PemDirectory{Dir: dir, Refresh: 30 * time.Second}
}

func (d *PemDirectory) list() (map[string]bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.files != nil && time.Since(d.listedAt) <= d.Refresh {
		return d.files, nil
	}
	entries, err := os.ReadDir(d.Dir)
	if err != nil {
		return nil, err
	}
	files := make(map[string]bool, len(entries))
	for _, e := range entries {
		if !e.IsDir() {
			files[e.Name()] = true
		}
	}
	d.files, d.listedAt = files, time.Now()
	return files, nil
}

func (d *PemDirectory) resolve(name, suffix string) (string, error) {
	files, err := d.list()
	if err != nil {
		return "", err
	}
	ids := make([]string, 0, len(files))
	for f := range files {
		if id, ok := strings.CutSuffix(f, suffix); ok && id != "" {
			ids = append(ids, id)
		}
	}
	return NewestVersion(ids, name), nil
}

func (d *PemDirectory) PublicKey(_ context.Context, name string) (*PublicKey, error) {
	id, err := d.resolve(name, ".pub.pem")
	if err != nil || id == "" {
		return nil, err
	}
	text, err := os.ReadFile(filepath.Join(d.Dir, id+".pub.pem"))
	if err != nil {
		return nil, err
	}
	key, err := ParsePublicKeyPEM(text)
	if err != nil {
		return nil, fmt.Errorf("%s.pub.pem: %w", id, err)
	}
	return &PublicKey{KeyID: id, Key: key}, nil
}

func (d *PemDirectory) privateKey(keyID string) (crypto.PrivateKey, error) {
	d.mu.Lock()
	key, ok := d.private[keyID]
	d.mu.Unlock()
	if ok {
		return key, nil
	}
	files, err := d.list()
	if err != nil || !files[keyID+".pem"] || strings.HasSuffix(keyID, ".pub") {
		return nil, err
	}
	text, err := os.ReadFile(filepath.Join(d.Dir, keyID+".pem"))
	if err != nil {
		return nil, err
	}
	if key, err = ParsePrivateKeyPEM(text); err != nil {
		return nil, fmt.Errorf("%s.pem: %w", keyID, err)
	}
	d.mu.Lock()
	if d.private == nil {
		d.private = map[string]crypto.PrivateKey{}
	}
	d.private[keyID] = key
	d.mu.Unlock()
	return key, nil
}

func (d *PemDirectory) Unwrap(_ context.Context, w WrappedKey, dataKeyID []byte) ([]byte, error) {
	key, err := d.privateKey(w.KeyID)
	if err != nil || key == nil {
		return nil, err
	}
	return UnwrapDataKey(key, w.KeyID, w.Algorithm, dataKeyID, w.Wrapped)
}

func (d *PemDirectory) Secret(_ context.Context, name string) (*Pseudonym, error) {
	id, err := d.resolve(name, ".secret")
	if err != nil || id == "" {
		return nil, err
	}
	text, err := os.ReadFile(filepath.Join(d.Dir, id+".secret"))
	if err != nil {
		return nil, err
	}
	s, err := ParseSecret(text)
	if err != nil {
		return nil, fmt.Errorf("%s.secret: %w", id, err)
	}
	return &Pseudonym{KeyID: id, Secret: s}, nil
}

// EnvKeyName is the environment variable part of a key id: upper-cased, every character outside
// [A-Z0-9] replaced by "_" (as JavaScript's toUpperCase and a /[^A-Z0-9]/g replacement do it: one "_"
// per UTF-16 code unit, "ß" upper-cased to "SS").
func EnvKeyName(keyID string) string {
	var b strings.Builder
	for _, r := range keyID {
		var up string
		if r == 'ß' {
			up = "SS"
		} else {
			up = strings.ToUpper(string(r))
		}
		for _, u := range up {
			switch {
			case u >= 'A' && u <= 'Z', u >= '0' && u <= '9':
				b.WriteRune(u)
			case u > 0xffff:
				b.WriteString("__")
			default:
				b.WriteString("_")
			}
		}
	}
	return b.String()
}

// EnvKeys reads keys from environment variables: LEDGERLINE_E2E_PUBLIC_<ID> and LEDGERLINE_E2E_PRIVATE_<ID>
// (PEM text), LEDGERLINE_E2E_SECRET_<ID> (base64), <ID> as EnvKeyName makes it. Ids are exact (no versions).
type EnvKeys struct {
	// Lookup reads a variable; os.LookupEnv when nil.
	Lookup func(name string) (string, bool)
}

func (e *EnvKeys) get(kind, keyID string) (string, bool) {
	lookup := e.Lookup
	if lookup == nil {
		lookup = os.LookupEnv
	}
	return lookup("LEDGERLINE_E2E_" + kind + "_" + EnvKeyName(keyID))
}

func (e *EnvKeys) PublicKey(_ context.Context, name string) (*PublicKey, error) {
	text, ok := e.get("PUBLIC", name)
	if !ok {
		return nil, nil
	}
	key, err := ParsePublicKeyPEM([]byte(text))
	if err != nil {
		return nil, fmt.Errorf("LEDGERLINE_E2E_PUBLIC_%s: %w", EnvKeyName(name), err)
	}
	return &PublicKey{KeyID: name, Key: key}, nil
}

func (e *EnvKeys) Unwrap(_ context.Context, w WrappedKey, dataKeyID []byte) ([]byte, error) {
	text, ok := e.get("PRIVATE", w.KeyID)
	if !ok {
		return nil, nil
	}
	key, err := ParsePrivateKeyPEM([]byte(text))
	if err != nil {
		return nil, fmt.Errorf("LEDGERLINE_E2E_PRIVATE_%s: %w", EnvKeyName(w.KeyID), err)
	}
	return UnwrapDataKey(key, w.KeyID, w.Algorithm, dataKeyID, w.Wrapped)
}

func (e *EnvKeys) Secret(_ context.Context, name string) (*Pseudonym, error) {
	text, ok := e.get("SECRET", name)
	if !ok {
		return nil, nil
	}
	s, err := ParseSecret([]byte(text))
	if err != nil {
		return nil, fmt.Errorf("LEDGERLINE_E2E_SECRET_%s: %w", EnvKeyName(name), err)
	}
	return &Pseudonym{KeyID: name, Secret: s}, nil
}

// CompositeKeys asks each reader in turn; the first that knows a key answers (an error ends the search).
type CompositeKeys []KeyReader

func (c CompositeKeys) PublicKey(ctx context.Context, name string) (*PublicKey, error) {
	for _, r := range c {
		if k, err := r.PublicKey(ctx, name); err != nil || k != nil {
			return k, err
		}
	}
	return nil, nil
}

func (c CompositeKeys) Unwrap(ctx context.Context, w WrappedKey, dataKeyID []byte) ([]byte, error) {
	for _, r := range c {
		if k, err := r.Unwrap(ctx, w, dataKeyID); err != nil || k != nil {
			return k, err
		}
	}
	return nil, nil
}

func (c CompositeKeys) Secret(ctx context.Context, name string) (*Pseudonym, error) {
	for _, r := range c {
		if s, err := r.Secret(ctx, name); err != nil || s != nil {
			return s, err
		}
	}
	return nil, nil
}

// StaticKeys holds keys in memory, by exact id (tests, or keys fetched elsewhere). Names resolve to their
// newest version as in a key directory.
type StaticKeys struct {
	Public  map[string]crypto.PublicKey
	Private map[string]crypto.PrivateKey
	Secrets map[string][]byte
}

func keysOf[V any](m map[string]V) []string {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	return ids
}

func (s *StaticKeys) PublicKey(_ context.Context, name string) (*PublicKey, error) {
	id := NewestVersion(keysOf(s.Public), name)
	if id == "" {
		return nil, nil
	}
	return &PublicKey{KeyID: id, Key: s.Public[id]}, nil
}

func (s *StaticKeys) Unwrap(_ context.Context, w WrappedKey, dataKeyID []byte) ([]byte, error) {
	key, ok := s.Private[w.KeyID]
	if !ok {
		return nil, nil
	}
	return UnwrapDataKey(key, w.KeyID, w.Algorithm, dataKeyID, w.Wrapped)
}

func (s *StaticKeys) Secret(_ context.Context, name string) (*Pseudonym, error) {
	id := NewestVersion(keysOf(s.Secrets), name)
	if id == "" {
		return nil, nil
	}
	return &Pseudonym{KeyID: id, Secret: s.Secrets[id]}, nil
}
