package e2e

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

var (
	rsaOnce sync.Once
	rsaKey  *rsa.PrivateKey
)

// testRSA is one 2048-bit key shared by the tests (generating one takes a while).
func testRSA(t *testing.T) *rsa.PrivateKey {
	rsaOnce.Do(func() {
		var err error
		if rsaKey, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
	})
	return rsaKey
}

func testX25519(t *testing.T) *ecdh.PrivateKey {
	k, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func publicOf(k any) any {
	switch k := k.(type) {
	case *rsa.PrivateKey:
		return &k.PublicKey
	case *ecdh.PrivateKey:
		return k.PublicKey()
	}
	panic("unknown key")
}

// writePair writes <id>.pem and <id>.pub.pem into dir, as `ledgerline keys generate` does.
func writePair(t *testing.T, dir, id string, priv any) {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := x509.MarshalPKIXPublicKey(publicOf(priv))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, id+".pem"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, id+".pub.pem"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeSecret(t *testing.T, dir, id string, secret []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, id+".secret"), []byte(base64.StdEncoding.EncodeToString(secret)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestNewestVersion(t *testing.T) {
	ids := []string{"orders", "orders.v2", "orders.v10", "orders.v9", "ordersx.v99", "other.v1", "orders.v1.v5"}
	for name, want := range map[string]string{"orders": "orders.v10", "orders.v2": "orders.v2", "other": "other.v1", "orders.v1": "orders.v1.v5", "none": "", "ordersx": "ordersx.v99"} {
		if got := NewestVersion(ids, name); got != want {
			t.Errorf("NewestVersion(%q) = %q, want %q", name, got, want)
		}
	}
	if got := NewestVersion([]string{"a"}, "a"); got != "a" {
		t.Errorf("unversioned alone: %q", got)
	}
}

func TestEnvKeyName(t *testing.T) {
	for id, want := range map[string]string{"billing.v3": "BILLING_V3", "analytics-1": "ANALYTICS_1", "empfänger-ü": "EMPF_NGER__", "straße": "STRASSE", "a😀b": "A__B"} {
		if got := EnvKeyName(id); got != want {
			t.Errorf("EnvKeyName(%q) = %q, want %q", id, got, want)
		}
	}
}

func TestPemDirectoryResolvesNewestAndUnwraps(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	old, cur := testX25519(t), testRSA(t)
	writePair(t, dir, "billing", old)
	writePair(t, dir, "billing.v2", cur)
	writeSecret(t, dir, "names", bytes.Repeat([]byte{7}, 32))
	writeSecret(t, dir, "names.v1", bytes.Repeat([]byte{8}, 32))
	d := NewPemDirectory(dir)
	pub, err := d.PublicKey(ctx, "billing")
	if err != nil || pub == nil || pub.KeyID != "billing.v2" {
		t.Fatalf("PublicKey(billing) = %+v, %v", pub, err)
	}
	if _, ok := pub.Key.(*rsa.PublicKey); !ok {
		t.Fatalf("billing.v2 is %T", pub.Key)
	}
	if pub, err := d.PublicKey(ctx, "missing"); pub != nil || err != nil {
		t.Fatalf("PublicKey(missing) = %+v, %v", pub, err)
	}
	s, err := d.Secret(ctx, "names")
	if err != nil || s.KeyID != "names.v1" || !bytes.Equal(s.Secret, bytes.Repeat([]byte{8}, 32)) {
		t.Fatalf("Secret(names) = %+v, %v", s, err)
	}
	// The older version still unwraps what was wrapped for it.
	id, key := bytes.Repeat([]byte{1}, 16), bytes.Repeat([]byte{2}, 32)
	alg, w, err := WrapDataKey(old.PublicKey(), "billing", id, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.Unwrap(ctx, WrappedKey{KeyID: "billing", Algorithm: alg, Wrapped: w}, id)
	if err != nil || !bytes.Equal(got, key) {
		t.Fatalf("Unwrap = %x, %v", got, err)
	}
	// No private key: nil, nil. A key id reaching outside the directory finds nothing.
	for _, keyID := range []string{"nobody", "../" + filepath.Base(dir) + "/billing", "billing.pub"} {
		if got, err := d.Unwrap(ctx, WrappedKey{KeyID: keyID, Algorithm: alg, Wrapped: w}, id); got != nil || err != nil {
			t.Fatalf("Unwrap(%s) = %x, %v", keyID, got, err)
		}
	}
	// Another data key id: an error (unwrap-failed for the decryptor).
	if _, err := d.Unwrap(ctx, WrappedKey{KeyID: "billing", Algorithm: alg, Wrapped: w}, bytes.Repeat([]byte{3}, 16)); err == nil {
		t.Fatal("a wrap bound to another data key id unwrapped")
	}
}

func TestPemDirectorySeesRotationAfterRefresh(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	writePair(t, dir, "r", testX25519(t))
	d := NewPemDirectory(dir)
	d.Refresh = 0
	if pub, _ := d.PublicKey(ctx, "r"); pub.KeyID != "r" {
		t.Fatalf("got %s", pub.KeyID)
	}
	writePair(t, dir, "r.v1", testX25519(t))
	if pub, _ := d.PublicKey(ctx, "r"); pub.KeyID != "r.v1" {
		t.Fatalf("after rotation got %s", pub.KeyID)
	}
}

func TestEnvKeys(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	priv := testX25519(t)
	writePair(t, dir, "x", priv)
	pubPem, _ := os.ReadFile(filepath.Join(dir, "x.pub.pem"))
	privPem, _ := os.ReadFile(filepath.Join(dir, "x.pem"))
	env := map[string]string{
		"LEDGERLINE_E2E_PUBLIC_BILLING_V3":  string(pubPem),
		"LEDGERLINE_E2E_PRIVATE_BILLING_V3": string(privPem),
		"LEDGERLINE_E2E_SECRET_NAMES":       base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef")),
	}
	e := &EnvKeys{Lookup: func(n string) (string, bool) { v, ok := env[n]; return v, ok }}
	pub, err := e.PublicKey(ctx, "billing.v3")
	if err != nil || pub == nil || pub.KeyID != "billing.v3" {
		t.Fatalf("%+v %v", pub, err)
	}
	id, key := make([]byte, 16), bytes.Repeat([]byte{5}, 32)
	alg, w, err := WrapDataKey(pub.Key, "billing.v3", id, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.Unwrap(ctx, WrappedKey{KeyID: "billing.v3", Algorithm: alg, Wrapped: w}, id)
	if err != nil || !bytes.Equal(got, key) {
		t.Fatalf("%x %v", got, err)
	}
	if s, err := e.Secret(ctx, "names"); err != nil || string(s.Secret) != "0123456789abcdef0123456789abcdef" {
		t.Fatalf("%+v %v", s, err)
	}
	// A composite asks in turn.
	c := CompositeKeys{&StaticKeys{}, e}
	if got, err := c.Unwrap(ctx, WrappedKey{KeyID: "billing.v3", Algorithm: alg, Wrapped: w}, id); err != nil || !bytes.Equal(got, key) {
		t.Fatalf("composite: %x %v", got, err)
	}
}

func TestWrapRefusesSmallRSAAndOtherKeys(t *testing.T) {
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := WrapDataKey(&small.PublicKey, "s", make([]byte, 16), make([]byte, 32), nil); err == nil {
		t.Fatal("a 1024-bit RSA key was accepted")
	}
	p256, _ := ecdh.P256().GenerateKey(rand.Reader)
	if _, _, err := WrapDataKey(p256.PublicKey(), "p", make([]byte, 16), make([]byte, 32), nil); err == nil {
		t.Fatal("a P-256 key was accepted")
	}
}

func TestWrapBindsKeyIDAndDataKeyID(t *testing.T) {
	for name, priv := range map[string]any{"rsa": testRSA(t), "x25519": testX25519(t)} {
		id, key := bytes.Repeat([]byte{1}, 16), bytes.Repeat([]byte{2}, 32)
		alg, w, err := WrapDataKey(publicOf(priv), "k", id, key, nil)
		if err != nil {
			t.Fatal(err)
		}
		if name == "x25519" && len(w) != 92 {
			t.Fatalf("X25519 wrap is %d bytes, want 92", len(w))
		}
		if got, err := UnwrapDataKey(priv, "k", alg, id, w); err != nil || !bytes.Equal(got, key) {
			t.Fatalf("%s: %x %v", name, got, err)
		}
		if _, err := UnwrapDataKey(priv, "k", alg, bytes.Repeat([]byte{9}, 16), w); err == nil {
			t.Errorf("%s: unwrapped under another data key id", name)
		}
		if name == "x25519" {
			if _, err := UnwrapDataKey(priv, "other", alg, id, w); err == nil {
				t.Errorf("%s: unwrapped under another key id", name)
			}
		}
		other := WrapRSAOAEP256 + WrapX25519HKDFSHA256A256GCM - alg
		if _, err := UnwrapDataKey(priv, "k", other, id, w); err == nil {
			t.Errorf("%s: unwrapped with the other algorithm", name)
		}
	}
}
