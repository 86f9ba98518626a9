package e2e

// Sealing of a record's parts under its data key (README, "Sealing"):
//
//	nonce(section) = nonce base with its last byte XOR section        (0 value, 1 key, 2 headers)
//	AAD(section)   = "ledgerline-e2e/1" | u8 section | u16 len, topic | i32 len (-1 = null), key as stored | head
//	sealed         = AES-256-GCM(data key, nonce, AAD, plaintext) | tag (16)

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"fmt"
)

const aadLabel = "ledgerline-e2e/1"

// SectionNonce is the nonce of one section: the nonce base with byte 11 XOR the section.
func SectionNonce(nonceBase []byte, s Section) []byte {
	n := make([]byte, NonceBytes)
	copy(n, nonceBase)
	n[NonceBytes-1] ^= byte(s)
	return n
}

// SectionAAD is the additional authenticated data of one section. storedKey nil is a null key.
func SectionAAD(s Section, topic string, storedKey []byte, head []byte) ([]byte, error) {
	if len(topic) > 0xffff {
		return nil, fmt.Errorf("a topic name is at most 65535 bytes, got %d", len(topic))
	}
	out := make([]byte, 0, len(aadLabel)+1+2+len(topic)+4+len(storedKey)+len(head))
	out = append(out, aadLabel...)
	out = append(out, byte(s))
	out = binary.BigEndian.AppendUint16(out, uint16(len(topic)))
	out = append(out, topic...)
	if storedKey == nil {
		out = binary.BigEndian.AppendUint32(out, 0xffffffff)
	} else {
		out = binary.BigEndian.AppendUint32(out, uint32(len(storedKey)))
		out = append(out, storedKey...)
	}
	return append(out, head...), nil
}

func newGCM(key []byte) (cipher.AEAD, error) {
	if len(key) != DataKeyBytes {
		return nil, fmt.Errorf("an AES-256 key is %d bytes, got %d", DataKeyBytes, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// SealPart seals plaintext under the data key: ciphertext, then the 16-byte tag. The result is never nil.
func SealPart(dataKey, nonceBase []byte, s Section, aad, plaintext []byte) ([]byte, error) {
	g, err := newGCM(dataKey)
	if err != nil {
		return nil, err
	}
	return sealWith(g, nonceBase, s, aad, plaintext), nil
}

// sealWith is SealPart with the data key's AEAD made already: the encryptor and the decryptor make one per
// data key, since AES's key schedule and GCM's tables cost more than sealing 1 KiB.
func sealWith(g cipher.AEAD, nonceBase []byte, s Section, aad, plaintext []byte) []byte {
	var nonce [NonceBytes]byte
	copy(nonce[:], nonceBase)
	nonce[NonceBytes-1] ^= byte(s)
	return g.Seal(make([]byte, 0, len(plaintext)+TagBytes), nonce[:], plaintext, aad)
}

// OpenPart opens a sealed part; an error when it does not authenticate. The result is never nil.
func OpenPart(dataKey, nonceBase []byte, s Section, aad, sealed []byte) ([]byte, error) {
	g, err := newGCM(dataKey)
	if err != nil {
		return nil, err
	}
	return openWith(g, nonceBase, s, aad, sealed)
}

// openWith is OpenPart with the data key's AEAD made already.
func openWith(g cipher.AEAD, nonceBase []byte, s Section, aad, sealed []byte) ([]byte, error) {
	if len(sealed) < TagBytes {
		return nil, fmt.Errorf("a sealed part is at least its %d-byte tag", TagBytes)
	}
	var nonce [NonceBytes]byte
	copy(nonce[:], nonceBase)
	nonce[NonceBytes-1] ^= byte(s)
	return g.Open(make([]byte, 0, len(sealed)-TagBytes), nonce[:], sealed, aad)
}
