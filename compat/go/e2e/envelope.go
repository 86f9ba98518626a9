package e2e

// The envelope, version 1: the binary value of a record's ledgerline.e2e header (src/crypto/README.md,
// "The envelope header"). This file only lays out and parses bytes; it holds no key.
//
//	offset size  field
//	0      1     version            0x01
//	1      1     cipher             0x01 = AES-256-GCM
//	2      1     flags              0x01 KEYS, 0x02 PSEUDONYM, 0x04 HEADERS; other bits 0
//	3      16    data key id
//	19     12    nonce base
//	31     ...   if KEYS:      u8 n (1..255), n x { u8 len, key id, u8 wrap, u16 len, wrapped }
//	       ...   if PSEUDONYM: u8 len, pseudonym key id
//	       ----- end of the head: bytes [0, head end) are in every AAD -----
//	       ...   if PSEUDONYM: u32 len (>= 16), sealed original key (section 1)
//	       ...   if HEADERS:   u32 len (>= 16), sealed header list  (section 2)

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// EnvelopeHeader is the record header that carries the envelope.
const EnvelopeHeader = "ledgerline.e2e"

const (
	EnvelopeVersion = 1
	CipherAES256GCM = 1

	FlagKeys      = 0x01
	FlagPseudonym = 0x02
	FlagHeaders   = 0x04
	knownFlags    = FlagKeys | FlagPseudonym | FlagHeaders

	DataKeyIDBytes = 16
	NonceBytes     = 12
	TagBytes       = 16
	DataKeyBytes   = 32

	fixedHeadBytes = 3 + DataKeyIDBytes + NonceBytes
)

// WrapAlgorithm is how a data key is wrapped for one recipient (README, "Wrapping").
type WrapAlgorithm uint8

const (
	WrapRSAOAEP256              WrapAlgorithm = 1
	WrapX25519HKDFSHA256A256GCM WrapAlgorithm = 2
)

func (a WrapAlgorithm) String() string {
	switch a {
	case WrapRSAOAEP256:
		return "RSA-OAEP-256"
	case WrapX25519HKDFSHA256A256GCM:
		return "X25519-HKDF-SHA256-A256GCM"
	}
	return fmt.Sprintf("wrap(%d)", uint8(a))
}

// Section picks a sealed part's nonce and AAD (README, "Sealing").
type Section uint8

const (
	SectionValue   Section = 0
	SectionKey     Section = 1
	SectionHeaders Section = 2
)

func (s Section) String() string {
	switch s {
	case SectionValue:
		return "value"
	case SectionKey:
		return "key"
	case SectionHeaders:
		return "headers"
	}
	return fmt.Sprintf("section(%d)", uint8(s))
}

// WrappedKey is a data key wrapped for one recipient.
type WrappedKey struct {
	// KeyID is the recipient's exact key id.
	KeyID     string
	Algorithm WrapAlgorithm
	Wrapped   []byte
}

// Envelope is a parsed ledgerline.e2e header value. Its slices share the parsed value's memory.
type Envelope struct {
	Version   uint8
	Cipher    uint8
	DataKeyID []byte
	NonceBase []byte
	// WrappedKeys is empty when the envelope references a data key announced earlier.
	WrappedKeys []WrappedKey
	// PseudonymKeyID is the pseudonym secret's key id; "" when the record key is not a pseudonym.
	PseudonymKeyID string
	// SealedKey and SealedHeaders are nil when absent.
	SealedKey     []byte
	SealedHeaders []byte
	// Head is bytes [0, head end) of the value: what every sealed part's AAD covers.
	Head []byte
}

// Head is what a producer lays out before sealing.
type Head struct {
	DataKeyID   []byte
	NonceBase   []byte
	WrappedKeys []WrappedKey
	// PseudonymKeyID sets PSEUDONYM when not "".
	PseudonymKeyID string
	// SealsHeaders sets HEADERS.
	SealsHeaders bool
}

// EncodeHead lays out an envelope's head; it refuses (an error) what no reader would accept.
func EncodeHead(h Head) ([]byte, error) {
	if len(h.DataKeyID) != DataKeyIDBytes {
		return nil, fmt.Errorf("a data key id is %d bytes, got %d", DataKeyIDBytes, len(h.DataKeyID))
	}
	if len(h.NonceBase) != NonceBytes {
		return nil, fmt.Errorf("a nonce base is %d bytes, got %d", NonceBytes, len(h.NonceBase))
	}
	if len(h.WrappedKeys) > 255 {
		return nil, errors.New("at most 255 recipients")
	}
	out := make([]byte, 0, 64)
	out = append(out, EnvelopeVersion, CipherAES256GCM, 0)
	out = append(out, h.DataKeyID...)
	out = append(out, h.NonceBase...)
	var flags byte
	if len(h.WrappedKeys) > 0 {
		flags |= FlagKeys
		out = append(out, byte(len(h.WrappedKeys)))
		for _, w := range h.WrappedKeys {
			if err := checkID("recipient key id", w.KeyID); err != nil {
				return nil, err
			}
			if w.Algorithm != WrapRSAOAEP256 && w.Algorithm != WrapX25519HKDFSHA256A256GCM {
				return nil, fmt.Errorf("unknown wrap algorithm %d", w.Algorithm)
			}
			if len(w.Wrapped) < 1 || len(w.Wrapped) > 0xffff {
				return nil, fmt.Errorf("a wrapped key is 1 to 65535 bytes, got %d", len(w.Wrapped))
			}
			out = append(out, byte(len(w.KeyID)))
			out = append(out, w.KeyID...)
			out = append(out, byte(w.Algorithm))
			out = binary.BigEndian.AppendUint16(out, uint16(len(w.Wrapped)))
			out = append(out, w.Wrapped...)
		}
	}
	if h.PseudonymKeyID != "" {
		flags |= FlagPseudonym
		if err := checkID("pseudonym key id", h.PseudonymKeyID); err != nil {
			return nil, err
		}
		out = append(out, byte(len(h.PseudonymKeyID)))
		out = append(out, h.PseudonymKeyID...)
	}
	if h.SealsHeaders {
		flags |= FlagHeaders
	}
	out[2] = flags
	return out, nil
}

func checkID(what, id string) error {
	if len(id) < 1 || len(id) > 255 {
		return fmt.Errorf("a %s is 1 to 255 bytes of UTF-8, got %d", what, len(id))
	}
	return nil
}

// EncodeEnvelope is the whole header value: the head, then the sealed parts (nil: absent) its flags announce.
func EncodeEnvelope(head, sealedKey, sealedHeaders []byte) []byte {
	out := make([]byte, 0, len(head)+8+len(sealedKey)+len(sealedHeaders))
	out = append(out, head...)
	if sealedKey != nil {
		out = binary.BigEndian.AppendUint32(out, uint32(len(sealedKey)))
		out = append(out, sealedKey...)
	}
	if sealedHeaders != nil {
		out = binary.BigEndian.AppendUint32(out, uint32(len(sealedHeaders)))
		out = append(out, sealedHeaders...)
	}
	return out
}

// DecodeEnvelope parses a header value, checking every length against the bytes present: it never reads
// past the value and allocates nothing in proportion to a length field. Errors are *Error with reason
// malformed.
func DecodeEnvelope(value []byte) (*Envelope, error) {
	d := decoder{b: value}
	if err := d.need(fixedHeadBytes, field("the fixed head")); err != nil {
		return nil, err
	}
	e := &Envelope{Version: value[0], Cipher: value[1]}
	if e.Version != EnvelopeVersion {
		return nil, errorf(ReasonMalformed, "unknown envelope version %d", e.Version)
	}
	if e.Cipher != CipherAES256GCM {
		return nil, errorf(ReasonMalformed, "unknown cipher %d", e.Cipher)
	}
	flags := value[2]
	if flags&^knownFlags != 0 {
		return nil, errorf(ReasonMalformed, "unknown flags 0x%x", flags)
	}
	e.DataKeyID = value[3 : 3+DataKeyIDBytes : 3+DataKeyIDBytes]
	e.NonceBase = value[3+DataKeyIDBytes : fixedHeadBytes : fixedHeadBytes]
	d.pos = fixedHeadBytes
	if flags&FlagKeys != 0 {
		if err := d.need(1, field("the recipient count")); err != nil {
			return nil, err
		}
		n := int(value[d.pos])
		d.pos++
		if n == 0 {
			return nil, errorf(ReasonMalformed, "KEYS is set but no recipient follows")
		}
		e.WrappedKeys = make([]WrappedKey, 0, n)
		for i := 0; i < n; i++ {
			id, err := d.id(what{"recipient %d's key id", i})
			if err != nil {
				return nil, err
			}
			if err := d.need(3, what{"recipient %d's wrap algorithm and length", i}); err != nil {
				return nil, err
			}
			alg := WrapAlgorithm(value[d.pos])
			if alg != WrapRSAOAEP256 && alg != WrapX25519HKDFSHA256A256GCM {
				return nil, errorf(ReasonMalformed, "recipient %d has unknown wrap algorithm %d", i, alg)
			}
			l := int(binary.BigEndian.Uint16(value[d.pos+1:]))
			d.pos += 3
			if l == 0 {
				return nil, errorf(ReasonMalformed, "recipient %d's wrapped key is empty", i)
			}
			if err := d.need(l, what{"recipient %d's wrapped key", i}); err != nil {
				return nil, err
			}
			e.WrappedKeys = append(e.WrappedKeys, WrappedKey{KeyID: id, Algorithm: alg, Wrapped: value[d.pos : d.pos+l : d.pos+l]})
			d.pos += l
		}
	}
	if flags&FlagPseudonym != 0 {
		id, err := d.id(field("the pseudonym key id"))
		if err != nil {
			return nil, err
		}
		e.PseudonymKeyID = id
	}
	e.Head = value[:d.pos:d.pos]
	var err error
	if flags&FlagPseudonym != 0 {
		if e.SealedKey, err = d.sealed(field("the sealed key")); err != nil {
			return nil, err
		}
	}
	if flags&FlagHeaders != 0 {
		if e.SealedHeaders, err = d.sealed(field("the sealed headers")); err != nil {
			return nil, err
		}
	}
	if d.pos != len(value) {
		return nil, errorf(ReasonMalformed, "%d bytes follow the envelope", len(value)-d.pos)
	}
	return e, nil
}

type decoder struct {
	b   []byte
	pos int
}

// what names a field in an error message; it is formatted only when there is an error to report, so a
// well-formed envelope costs no fmt call (the broker and every consumer parse one per record).
type what struct {
	format string
	index  int // the recipient, for a format with %d; -1 otherwise
}

func field(name string) what { return what{name, -1} }

func (w what) String() string {
	if w.index < 0 {
		return w.format
	}
	return fmt.Sprintf(w.format, w.index)
}

func (d *decoder) need(n int, w what) error {
	if len(d.b)-d.pos < n {
		return errorf(ReasonMalformed, "envelope ends inside %s (at byte %d, %d bytes in all)", w, d.pos, len(d.b))
	}
	return nil
}

func (d *decoder) needLengthOf(n int, w what) error {
	if len(d.b)-d.pos < n {
		return errorf(ReasonMalformed, "envelope ends inside the length of %s (at byte %d, %d bytes in all)", w, d.pos, len(d.b))
	}
	return nil
}

func (d *decoder) id(w what) (string, error) {
	if err := d.needLengthOf(1, w); err != nil {
		return "", err
	}
	l := int(d.b[d.pos])
	d.pos++
	if l == 0 {
		return "", errorf(ReasonMalformed, "empty %s", w)
	}
	if err := d.need(l, w); err != nil {
		return "", err
	}
	s := string(d.b[d.pos : d.pos+l])
	d.pos += l
	return s, nil
}

func (d *decoder) sealed(w what) ([]byte, error) {
	if err := d.needLengthOf(4, w); err != nil {
		return nil, err
	}
	l := uint64(binary.BigEndian.Uint32(d.b[d.pos:]))
	d.pos += 4
	if l < TagBytes {
		return nil, errorf(ReasonMalformed, "%s is %d bytes, shorter than its %d-byte tag", w, l, TagBytes)
	}
	if uint64(len(d.b)-d.pos) < l {
		return nil, errorf(ReasonMalformed, "envelope ends inside %s (at byte %d, %d bytes in all)", w, d.pos, len(d.b))
	}
	s := d.b[d.pos : d.pos+int(l) : d.pos+int(l)]
	d.pos += int(l)
	return s, nil
}

// Header is one record header; a nil Value is a null value.
type Header struct {
	Key   string
	Value []byte
}

// EncodeHeaderList is the plaintext of the sealed-headers section:
//
//	u16 count, then count x { u16 name length, name (UTF-8), i32 value length (-1 = null), value }
func EncodeHeaderList(headers []Header) ([]byte, error) {
	if len(headers) > 0xffff {
		return nil, errors.New("at most 65535 sealed headers")
	}
	n := 2
	for _, h := range headers {
		if len(h.Key) > 0xffff {
			return nil, errors.New("a sealed header name is at most 65535 bytes")
		}
		n += 6 + len(h.Key) + len(h.Value)
	}
	out := make([]byte, 0, n)
	out = binary.BigEndian.AppendUint16(out, uint16(len(headers)))
	for _, h := range headers {
		out = binary.BigEndian.AppendUint16(out, uint16(len(h.Key)))
		out = append(out, h.Key...)
		if h.Value == nil {
			out = binary.BigEndian.AppendUint32(out, 0xffffffff)
			continue
		}
		out = binary.BigEndian.AppendUint32(out, uint32(len(h.Value)))
		out = append(out, h.Value...)
	}
	return out, nil
}

// DecodeHeaderList parses what EncodeHeaderList wrote (after authentication, so a failure here is a
// producer's bug; reason malformed). Values are copies; an empty value is non-nil.
func DecodeHeaderList(b []byte) ([]Header, error) {
	short := func() error { return errorf(ReasonMalformed, "sealed header list ends early") }
	if len(b) < 2 {
		return nil, short()
	}
	count := int(binary.BigEndian.Uint16(b))
	pos := 2
	out := make([]Header, 0, min(count, len(b)/6))
	for i := 0; i < count; i++ {
		if len(b)-pos < 2 {
			return nil, short()
		}
		nameLen := int(binary.BigEndian.Uint16(b[pos:]))
		pos += 2
		if len(b)-pos < nameLen+4 {
			return nil, short()
		}
		name := string(b[pos : pos+nameLen])
		pos += nameLen
		valueLen := int64(int32(binary.BigEndian.Uint32(b[pos:])))
		pos += 4
		if valueLen < -1 {
			return nil, errorf(ReasonMalformed, "sealed header %d has length %d", i, valueLen)
		}
		if valueLen == -1 {
			out = append(out, Header{Key: name})
			continue
		}
		if int64(len(b)-pos) < valueLen {
			return nil, short()
		}
		v := make([]byte, valueLen)
		copy(v, b[pos:])
		out = append(out, Header{Key: name, Value: v})
		pos += int(valueLen)
	}
	if pos != len(b) {
		return nil, errorf(ReasonMalformed, "bytes follow the sealed header list")
	}
	return out, nil
}
