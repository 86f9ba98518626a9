package e2e

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

func testHead(t *testing.T, h Head) []byte {
	t.Helper()
	b, err := EncodeHead(h)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func fullEnvelope(t *testing.T) []byte {
	head := testHead(t, Head{
		DataKeyID:      bytes.Repeat([]byte{1}, 16),
		NonceBase:      bytes.Repeat([]byte{2}, 12),
		WrappedKeys:    []WrappedKey{{KeyID: "a", Algorithm: WrapX25519HKDFSHA256A256GCM, Wrapped: []byte{9, 9, 9}}, {KeyID: "bb", Algorithm: WrapRSAOAEP256, Wrapped: []byte{8}}},
		PseudonymKeyID: "p",
		SealsHeaders:   true,
	})
	return EncodeEnvelope(head, bytes.Repeat([]byte{3}, 16), bytes.Repeat([]byte{4}, 20))
}

func TestEnvelopeRoundTrip(t *testing.T) {
	v := fullEnvelope(t)
	e, err := DecodeEnvelope(v)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.WrappedKeys) != 2 || e.WrappedKeys[1].KeyID != "bb" || e.WrappedKeys[0].Algorithm != WrapX25519HKDFSHA256A256GCM || !bytes.Equal(e.WrappedKeys[0].Wrapped, []byte{9, 9, 9}) {
		t.Fatalf("wrapped keys %+v", e.WrappedKeys)
	}
	if e.PseudonymKeyID != "p" || len(e.SealedKey) != 16 || len(e.SealedHeaders) != 20 {
		t.Fatalf("envelope %+v", e)
	}
	if want := 31 + 1 + (1 + 1 + 1 + 2 + 3) + (1 + 2 + 1 + 2 + 1) + 2; len(e.Head) != want {
		t.Fatalf("head is %d bytes, want %d", len(e.Head), want)
	}
	if v[2] != FlagKeys|FlagPseudonym|FlagHeaders {
		t.Fatalf("flags %x", v[2])
	}
}

func TestEnvelopeReferenceHasNoKeysFlag(t *testing.T) {
	v := EncodeEnvelope(testHead(t, Head{DataKeyID: make([]byte, 16), NonceBase: make([]byte, 12)}), nil, nil)
	if len(v) != 31 || v[2] != 0 {
		t.Fatalf("reference envelope %x", v)
	}
	e, err := DecodeEnvelope(v)
	if err != nil || len(e.WrappedKeys) != 0 || e.SealedKey != nil || e.SealedHeaders != nil {
		t.Fatalf("%+v %v", e, err)
	}
}

// TestEnvelopeRefusals covers every refusal of README "The envelope header", each with reason malformed.
func TestEnvelopeRefusals(t *testing.T) {
	good := fullEnvelope(t)
	mut := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	// Offsets in good: 31 count, 32 len "a", 33 'a', 34 alg, 35-36 len 3, 37-39 wrapped, 40 len "bb" ...
	keysOnly := func(n byte, rest ...byte) []byte {
		h := testHead(t, Head{DataKeyID: make([]byte, 16), NonceBase: make([]byte, 12), WrappedKeys: []WrappedKey{{KeyID: "a", Algorithm: 1, Wrapped: []byte{1}}}})
		return append(append(h[:31:31], n), rest...)
	}
	cases := map[string][]byte{
		"empty":                 {},
		"short fixed head":      good[:30],
		"version 2":             mut(func(b []byte) []byte { b[0] = 2; return b }),
		"version 0":             mut(func(b []byte) []byte { b[0] = 0; return b }),
		"cipher 2":              mut(func(b []byte) []byte { b[1] = 2; return b }),
		"flag 0x08":             mut(func(b []byte) []byte { b[2] |= 0x08; return b }),
		"flag 0x80":             mut(func(b []byte) []byte { b[2] |= 0x80; return b }),
		"KEYS with n = 0":       keysOnly(0),
		"empty key id":          keysOnly(1, 0, 1, 0, 1, 7),
		"unknown wrap 0":        keysOnly(1, 1, 'a', 0, 0, 1, 7),
		"unknown wrap 3":        keysOnly(1, 1, 'a', 3, 0, 1, 7),
		"empty wrapped key":     keysOnly(1, 1, 'a', 1, 0, 0),
		"wrapped key too long":  keysOnly(1, 1, 'a', 1, 0, 5, 7),
		"key id too long":       keysOnly(1, 9, 'a'),
		"no count":              keysOnly(1)[:31],
		"cut in recipient":      good[:36],
		"cut in pseudonym id":   good[:48],
		"empty pseudonym id":    mut(func(b []byte) []byte { b[47] = 0; return b }),
		"sealed key short":      mut(func(b []byte) []byte { binary.BigEndian.PutUint32(b[49:], 15); return b }),
		"sealed key too long":   mut(func(b []byte) []byte { binary.BigEndian.PutUint32(b[49:], 0xffffffff); return b }),
		"cut in sealed headers": good[:len(good)-1],
		"trailing byte":         append(append([]byte(nil), good...), 0),
		"no sealed headers":     good[:49+4+16],
	}
	if good[47] != 1 || good[48] != 'p' {
		t.Fatalf("test offsets are off: %x", good)
	}
	for name, v := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := DecodeEnvelope(v)
			var e *Error
			if !errors.As(err, &e) || e.Reason != ReasonMalformed {
				t.Fatalf("DecodeEnvelope(%x) = %v, want a malformed *Error", v, err)
			}
		})
	}
}

func TestEnvelopeOfRefusesNullAndTwo(t *testing.T) {
	v := EncodeEnvelope(testHead(t, Head{DataKeyID: make([]byte, 16), NonceBase: make([]byte, 12)}), nil, nil)
	for name, hs := range map[string][]Header{
		"null value":    {{Key: EnvelopeHeader}},
		"two envelopes": {{Key: EnvelopeHeader, Value: v}, {Key: "x"}, {Key: EnvelopeHeader, Value: v}},
	} {
		_, err := EnvelopeOf(hs)
		var e *Error
		if !errors.As(err, &e) || e.Reason != ReasonMalformed {
			t.Errorf("%s: %v, want malformed", name, err)
		}
	}
	if e, err := EnvelopeOf([]Header{{Key: "a", Value: []byte("b")}}); e != nil || err != nil {
		t.Fatalf("plaintext: %v %v", e, err)
	}
}

func TestEncodeHeadRefusesWhatNoReaderAccepts(t *testing.T) {
	base := Head{DataKeyID: make([]byte, 16), NonceBase: make([]byte, 12)}
	bad := []Head{
		{DataKeyID: make([]byte, 15), NonceBase: make([]byte, 12)},
		{DataKeyID: make([]byte, 16), NonceBase: make([]byte, 11)},
		func() Head {
			h := base
			h.WrappedKeys = []WrappedKey{{KeyID: "", Algorithm: 1, Wrapped: []byte{1}}}
			return h
		}(),
		func() Head { h := base; h.WrappedKeys = []WrappedKey{{KeyID: "a", Algorithm: 1}}; return h }(),
		func() Head {
			h := base
			h.WrappedKeys = []WrappedKey{{KeyID: "a", Algorithm: 7, Wrapped: []byte{1}}}
			return h
		}(),
		func() Head { h := base; h.PseudonymKeyID = string(make([]byte, 256)); return h }(),
		func() Head { h := base; h.WrappedKeys = make([]WrappedKey, 256); return h }(),
	}
	for i, h := range bad {
		if _, err := EncodeHead(h); err == nil {
			t.Errorf("case %d: EncodeHead accepted %+v", i, h)
		}
	}
}

func TestHeaderListRoundTrip(t *testing.T) {
	in := []Header{{Key: "a", Value: []byte("1")}, {Key: "a", Value: nil}, {Key: "", Value: []byte{}}, {Key: "ключ", Value: []byte("значение")}}
	b, err := EncodeHeaderList(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := DecodeHeaderList(b)
	if err != nil {
		t.Fatal(err)
	}
	if d := DiffRecords(Record{Headers: out}, Record{Headers: in}); d != "" {
		t.Fatal(d)
	}
	for _, cut := range [][]byte{b[:1], b[:len(b)-1], append(append([]byte(nil), b...), 0)} {
		if _, err := DecodeHeaderList(cut); err == nil {
			t.Errorf("DecodeHeaderList(%x) accepted", cut)
		}
	}
	// A huge count or value length allocates nothing in proportion.
	if _, err := DecodeHeaderList([]byte{0xff, 0xff, 0, 1, 'a', 0x7f, 0xff, 0xff, 0xff}); err == nil {
		t.Error("a value length past the list was accepted")
	}
}

// FuzzDecodeEnvelope: any header value parses or is refused as malformed; never a panic, and what parses
// encodes back to the same bytes.
func FuzzDecodeEnvelope(f *testing.F) {
	f.Add([]byte{})
	f.Add(EncodeEnvelope(make([]byte, 31), nil, nil))
	head, _ := EncodeHead(Head{DataKeyID: make([]byte, 16), NonceBase: make([]byte, 12), WrappedKeys: []WrappedKey{{KeyID: "a", Algorithm: 2, Wrapped: make([]byte, 92)}}, PseudonymKeyID: "p", SealsHeaders: true})
	f.Add(EncodeEnvelope(head, make([]byte, 16), make([]byte, 18)))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := DecodeEnvelope(b)
		if err != nil {
			var ee *Error
			if !errors.As(err, &ee) || ee.Reason != ReasonMalformed {
				t.Fatalf("error %v is not malformed", err)
			}
			return
		}
		h, err := EncodeHead(Head{DataKeyID: e.DataKeyID, NonceBase: e.NonceBase, WrappedKeys: e.WrappedKeys, PseudonymKeyID: e.PseudonymKeyID, SealsHeaders: e.SealedHeaders != nil})
		if err != nil {
			t.Fatalf("parsed %x but cannot encode it: %v", b, err)
		}
		if again := EncodeEnvelope(h, e.SealedKey, e.SealedHeaders); !bytes.Equal(again, b) || !bytes.Equal(h, e.Head) {
			t.Fatalf("%x encodes back to %x", b, again)
		}
	})
}
