package e2e

// Wrapping a data key for one recipient (README, "Wrapping"):
//
// RSA-OAEP-256 (RSA of at least 2048 bits):
//
//	wrapped = RSAES-OAEP(SHA-256, MGF1-SHA-256, label = data key id)(data key)
//
// X25519-HKDF-SHA256-A256GCM:
//
//	e       = a fresh X25519 key pair; shared = X25519(e.private, recipient public)
//	kek     = HKDF-SHA256(shared, salt = e.public | recipient public, info = "ledgerline-e2e/1 x25519" | data key id, 32)
//	wrapped = e.public (32) | nonce (12) | AES-256-GCM(kek, nonce, AAD = recipient key id)(data key) | tag (16)
//
// Both bind the data key id, so a wrapped key copied into another envelope does not unwrap.

import (
	"crypto"
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
)

// MinRSABits is the smallest RSA modulus a recipient may have.
const MinRSABits = 2048

const (
	x25519Info         = "ledgerline-e2e/1 x25519"
	x25519WrappedBytes = 32 + NonceBytes + DataKeyBytes + TagBytes
)

// WrapAlgorithmOf is the algorithm a recipient's key (public or private) calls for: RSA (at least 2048
// bits) or X25519; an error for any other key.
func WrapAlgorithmOf(key any) (WrapAlgorithm, error) {
	switch k := key.(type) {
	case *rsa.PublicKey:
		if k.N.BitLen() < MinRSABits {
			return 0, fmt.Errorf("an RSA recipient key needs at least %d bits, this one has %d", MinRSABits, k.N.BitLen())
		}
		return WrapRSAOAEP256, nil
	case *rsa.PrivateKey:
		return WrapAlgorithmOf(&k.PublicKey)
	case *ecdh.PublicKey:
		if k.Curve() == ecdh.X25519() {
			return WrapX25519HKDFSHA256A256GCM, nil
		}
	case *ecdh.PrivateKey:
		if k.Curve() == ecdh.X25519() {
			return WrapX25519HKDFSHA256A256GCM, nil
		}
	}
	return 0, fmt.Errorf("a recipient key must be RSA or X25519, not %T", key)
}

// WrapRandomness overrides a wrap's randomness, only so that test vectors are reproducible.
type WrapRandomness struct {
	// Ephemeral is X25519's ephemeral private key.
	Ephemeral *ecdh.PrivateKey
	// Nonce is X25519's key-wrap nonce (12 bytes).
	Nonce []byte
	// Rand is RSA-OAEP's randomness (crypto/rand when nil).
	Rand io.Reader
}

// WrapDataKey wraps dataKey for the recipient whose public key (RSA or X25519) is given.
func WrapDataKey(recipient crypto.PublicKey, keyID string, dataKeyID, dataKey []byte, random *WrapRandomness) (WrapAlgorithm, []byte, error) {
	if random == nil {
		random = &WrapRandomness{}
	}
	alg, err := WrapAlgorithmOf(recipient)
	if err != nil {
		return 0, nil, err
	}
	if alg == WrapRSAOAEP256 {
		r := random.Rand
		if r == nil {
			r = rand.Reader
		}
		w, err := rsa.EncryptOAEP(sha256.New(), r, recipient.(*rsa.PublicKey), dataKey, dataKeyID)
		return alg, w, err
	}
	var pub *ecdh.PublicKey
	switch k := recipient.(type) {
	case *ecdh.PublicKey:
		pub = k
	case *ecdh.PrivateKey:
		pub = k.PublicKey()
	}
	eph := random.Ephemeral
	if eph == nil {
		if eph, err = ecdh.X25519().GenerateKey(rand.Reader); err != nil {
			return 0, nil, err
		}
	}
	shared, err := eph.ECDH(pub)
	if err != nil {
		return 0, nil, err
	}
	kek, err := x25519KEK(shared, eph.PublicKey().Bytes(), pub.Bytes(), dataKeyID)
	if err != nil {
		return 0, nil, err
	}
	nonce := random.Nonce
	if nonce == nil {
		nonce = make([]byte, NonceBytes)
		if _, err := rand.Read(nonce); err != nil {
			return 0, nil, err
		}
	}
	if len(nonce) != NonceBytes {
		return 0, nil, fmt.Errorf("a wrap nonce is %d bytes", NonceBytes)
	}
	g, err := newGCM(kek)
	if err != nil {
		return 0, nil, err
	}
	out := make([]byte, 0, x25519WrappedBytes)
	out = append(out, eph.PublicKey().Bytes()...)
	out = append(out, nonce...)
	return alg, g.Seal(out, nonce, dataKey, []byte(keyID)), nil
}

func x25519KEK(shared, ephemeralPublic, recipientPublic, dataKeyID []byte) ([]byte, error) {
	salt := make([]byte, 0, 64)
	salt = append(append(salt, ephemeralPublic...), recipientPublic...)
	return hkdf.Key(sha256.New, shared, salt, x25519Info+string(dataKeyID), 32)
}

// UnwrapDataKey opens a wrapped data key with the recipient's private key (*rsa.PrivateKey or an X25519
// *ecdh.PrivateKey); an error when it does not open (another key, another data key id, tampering).
func UnwrapDataKey(private crypto.PrivateKey, keyID string, alg WrapAlgorithm, dataKeyID, wrapped []byte) ([]byte, error) {
	have, err := WrapAlgorithmOf(private)
	if err != nil {
		return nil, err
	}
	if have != alg {
		return nil, fmt.Errorf("key %s is for %s, the data key was wrapped with %s", keyID, have, alg)
	}
	var key []byte
	if alg == WrapRSAOAEP256 {
		if key, err = rsa.DecryptOAEP(sha256.New(), nil, private.(*rsa.PrivateKey), wrapped, dataKeyID); err != nil {
			return nil, err
		}
	} else {
		if len(wrapped) != x25519WrappedBytes {
			return nil, fmt.Errorf("an X25519 wrapped key is %d bytes, got %d", x25519WrappedBytes, len(wrapped))
		}
		priv := private.(*ecdh.PrivateKey)
		eph, err := ecdh.X25519().NewPublicKey(wrapped[:32])
		if err != nil {
			return nil, err
		}
		shared, err := priv.ECDH(eph)
		if err != nil {
			return nil, err
		}
		kek, err := x25519KEK(shared, wrapped[:32], priv.PublicKey().Bytes(), dataKeyID)
		if err != nil {
			return nil, err
		}
		g, err := newGCM(kek)
		if err != nil {
			return nil, err
		}
		if key, err = g.Open(nil, wrapped[32:32+NonceBytes], wrapped[32+NonceBytes:], []byte(keyID)); err != nil {
			return nil, errors.New("the X25519-wrapped data key does not authenticate")
		}
	}
	if len(key) != DataKeyBytes {
		return nil, fmt.Errorf("an unwrapped data key is %d bytes, got %d", DataKeyBytes, len(key))
	}
	return key, nil
}
