package e2e

// A record sealed and opened as src/crypto/README.md specifies, over a client-neutral record shape: the
// deterministic core the test vectors pin down. Randomness and keys come in as parameters; the Encryptor
// and Decryptor supply them.

import (
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
)

// Record is a record as every client has it. A nil Key or Value is null (a nil Value is a tombstone);
// an empty non-nil slice is empty.
type Record struct {
	Key     []byte
	Value   []byte
	Headers []Header
}

// Pseudonym is a pseudonym secret with its exact key id.
type Pseudonym struct {
	KeyID  string
	Secret []byte
}

// SealParams is everything a producer chooses for one record.
type SealParams struct {
	Topic     string
	DataKeyID []byte
	DataKey   []byte
	NonceBase []byte
	// WrappedKeys empty: the envelope references the data key (announced by an earlier record).
	WrappedKeys []WrappedKey
	// Pseudonym, when set, replaces a non-null key by HMAC-SHA256(secret, key) and seals the original.
	Pseudonym *Pseudonym
	// SealHeaders names the headers to seal; the others stay in the clear.
	SealHeaders []string
	// aead is DataKey's AEAD when the caller holds one (the Encryptor); nil: made for this record.
	aead cipher.AEAD
}

// PseudonymOf is HMAC-SHA256(secret, key).
func PseudonymOf(secret, key []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write(key)
	return m.Sum(nil)
}

// SealRecord is the stored form of r: key (or its pseudonym), sealed value (a null value stays null),
// the clear headers, then the envelope header. It refuses a record that already has an envelope.
func SealRecord(r Record, p SealParams) (Record, error) {
	var clear, sealed []Header
	for _, h := range r.Headers {
		if h.Key == EnvelopeHeader {
			return Record{}, errorf(ReasonMalformed, "the record already has a %s header", EnvelopeHeader)
		}
		if contains(p.SealHeaders, h.Key) {
			sealed = append(sealed, h)
		} else {
			clear = append(clear, h)
		}
	}
	pseudonym := p.Pseudonym
	if r.Key == nil {
		pseudonym = nil
	}
	storedKey := r.Key
	head := Head{DataKeyID: p.DataKeyID, NonceBase: p.NonceBase, WrappedKeys: p.WrappedKeys, SealsHeaders: len(sealed) > 0}
	if pseudonym != nil {
		storedKey = PseudonymOf(pseudonym.Secret, r.Key)
		head.PseudonymKeyID = pseudonym.KeyID
	}
	headBytes, err := EncodeHead(head)
	if err != nil {
		return Record{}, err
	}
	g := p.aead
	if g == nil {
		if g, err = newGCM(p.DataKey); err != nil {
			return Record{}, err
		}
	}
	seal := func(s Section, plaintext []byte) ([]byte, error) {
		aad, err := SectionAAD(s, p.Topic, storedKey, headBytes)
		if err != nil {
			return nil, err
		}
		return sealWith(g, p.NonceBase, s, aad, plaintext), nil
	}
	var sealedKey, sealedHeaders, value []byte
	if pseudonym != nil {
		if sealedKey, err = seal(SectionKey, r.Key); err != nil {
			return Record{}, err
		}
	}
	if len(sealed) > 0 {
		list, err := EncodeHeaderList(sealed)
		if err != nil {
			return Record{}, err
		}
		if sealedHeaders, err = seal(SectionHeaders, list); err != nil {
			return Record{}, err
		}
	}
	if r.Value != nil {
		if value, err = seal(SectionValue, r.Value); err != nil {
			return Record{}, err
		}
	}
	headers := make([]Header, 0, len(clear)+1)
	headers = append(headers, clear...)
	headers = append(headers, Header{Key: EnvelopeHeader, Value: EncodeEnvelope(headBytes, sealedKey, sealedHeaders)})
	return Record{Key: storedKey, Value: value, Headers: headers}, nil
}

func contains(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

// EnvelopeOf finds and parses a record's envelope: nil, nil when it has none (plaintext); an *Error
// (malformed) when it is malformed, null or repeated.
func EnvelopeOf(headers []Header) (*Envelope, error) {
	var found []byte
	seen := false
	for _, h := range headers {
		if h.Key != EnvelopeHeader {
			continue
		}
		if seen {
			return nil, errorf(ReasonMalformed, "the record has more than one %s header", EnvelopeHeader)
		}
		seen = true
		found = h.Value
	}
	if !seen {
		return nil, nil
	}
	if found == nil {
		return nil, errorf(ReasonMalformed, "the %s header has a null value", EnvelopeHeader)
	}
	return DecodeEnvelope(found)
}

// OpenRecord opens a stored record with its unwrapped data key: the original key, the value, the clear
// headers (without the envelope) followed by the sealed ones. An *Error (not-authentic) when a part fails.
func OpenRecord(r Record, topic string, env *Envelope, dataKey []byte) (Record, error) {
	g, err := newGCM(dataKey)
	return openRecord(r, topic, env, g, err)
}

// openRecord is OpenRecord with the data key's AEAD made already (the Decryptor keeps one per data key), or
// why it could not be made (gErr), which fails every sealed part as a wrong key does.
func openRecord(r Record, topic string, env *Envelope, g cipher.AEAD, gErr error) (Record, error) {
	open := func(s Section, sealed []byte) ([]byte, error) {
		aad, err := SectionAAD(s, topic, r.Key, env.Head)
		if err == nil {
			err = gErr
		}
		if err == nil {
			var b []byte
			if b, err = openWith(g, env.NonceBase, s, aad, sealed); err == nil {
				return b, nil
			}
		}
		return nil, &Error{Reason: ReasonNotAuthentic, Err: err, Message: "the record's " + s.String() +
			" does not authenticate under data key " + hex.EncodeToString(env.DataKeyID) + " (topic, key or envelope changed, or a wrong key)"}
	}
	out := Record{Key: r.Key}
	var err error
	if env.SealedKey != nil {
		if out.Key, err = open(SectionKey, env.SealedKey); err != nil {
			return Record{}, err
		}
	}
	if r.Value != nil {
		if out.Value, err = open(SectionValue, r.Value); err != nil {
			return Record{}, err
		}
	}
	out.Headers = make([]Header, 0, len(r.Headers))
	for _, h := range r.Headers {
		if h.Key != EnvelopeHeader {
			out.Headers = append(out.Headers, h)
		}
	}
	if env.SealedHeaders != nil {
		list, err := open(SectionHeaders, env.SealedHeaders)
		if err != nil {
			return Record{}, err
		}
		sealed, err := DecodeHeaderList(list)
		if err != nil {
			return Record{}, err
		}
		out.Headers = append(out.Headers, sealed...)
	}
	return out, nil
}
