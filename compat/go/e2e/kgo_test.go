package e2e

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func kgoRecord(topic string, i int) *kgo.Record {
	s := sample(i)
	return &kgo.Record{Topic: topic, Partition: 2, Key: s.Key, Value: s.Value, Headers: toKgoHeaders(s.Headers)}
}

func TestEncryptAndDecryptKgoRecordInPlace(t *testing.T) {
	ctx := context.Background()
	keys := staticKeys(t, map[string]crypto.PrivateKey{"x": testX25519(t)})
	enc, _ := NewEncryptor(EncryptorConfig{Keys: keys, Recipients: []string{"x"}, SealHeaders: []string{"h-secret"}, PseudonymKeyID: "names"})
	dec, _ := NewDecryptor(DecryptorConfig{Keys: keys})
	r := kgoRecord("t", 3)
	ts := time.Unix(77, 0)
	r.Timestamp = ts
	if err := enc.EncryptRecord(ctx, r); err != nil {
		t.Fatal(err)
	}
	if r.Partition != 2 || !r.Timestamp.Equal(ts) || string(r.Key) == "k3" || len(r.Headers) != 2 || r.Headers[1].Key != EnvelopeHeader {
		t.Fatalf("stored %+v", r)
	}
	if err := enc.EncryptRecord(ctx, r); err == nil {
		t.Fatal("encrypted twice")
	}
	deliver, err := dec.DecryptRecord(ctx, r)
	if !deliver || err != nil || StatusOf(r) != StatusDecrypted || FailureOf(r) != nil {
		t.Fatalf("%v %v %v", deliver, err, StatusOf(r))
	}
	want := sample(3)
	if d := DiffRecords(Record{Key: r.Key, Value: r.Value, Headers: fromKgoHeaders(r.Headers)}, want); d != "" {
		t.Fatal(d)
	}
	// A tombstone stays a tombstone.
	tomb := &kgo.Record{Topic: "t", Key: []byte("k")}
	if err := enc.EncryptRecord(ctx, tomb); err != nil || tomb.Value != nil {
		t.Fatalf("tombstone %v %x", err, tomb.Value)
	}
	if _, err := dec.DecryptRecord(ctx, tomb); err != nil || tomb.Value != nil || string(tomb.Key) != "k" {
		t.Fatalf("tombstone back %v %+v", err, tomb)
	}
	// Plaintext is delivered as it is.
	plain := kgoRecord("t", 1)
	if deliver, err := dec.DecryptRecord(ctx, plain); !deliver || err != nil || StatusOf(plain) != StatusPlaintext {
		t.Fatal(deliver, err)
	}
}

func TestDecryptRecordFailureActions(t *testing.T) {
	ctx := context.Background()
	keys := staticKeys(t, map[string]crypto.PrivateKey{"x": testX25519(t)})
	enc, _ := NewEncryptor(EncryptorConfig{Keys: keys, Recipients: []string{"x"}})
	for _, action := range []FailureAction{Fail, Discard, Consume} {
		r := kgoRecord("t", 5)
		r.Offset = 41
		if err := enc.EncryptRecord(ctx, r); err != nil {
			t.Fatal(err)
		}
		stored := Record{Key: r.Key, Value: r.Value, Headers: fromKgoHeaders(r.Headers)}
		dec, _ := NewDecryptor(DecryptorConfig{Keys: &StaticKeys{}, OnFailure: action})
		deliver, err := dec.DecryptRecord(ctx, r)
		if d := DiffRecords(Record{Key: r.Key, Value: r.Value, Headers: fromKgoHeaders(r.Headers)}, stored); d != "" {
			t.Fatalf("%s changed the record: %s", action, d)
		}
		switch action {
		case Fail:
			var re *RecordError
			var e *Error
			if deliver || !errors.As(err, &re) || re.Offset != 41 || re.Partition != 2 || !errors.As(err, &e) || e.Reason != ReasonNoKey {
				t.Fatalf("FAIL: %v %v", deliver, err)
			}
		case Discard:
			if deliver || err != nil {
				t.Fatalf("DISCARD: %v %v", deliver, err)
			}
		case Consume:
			if !deliver || err != nil || StatusOf(r) != StatusFailed || FailureOf(r).Reason != ReasonNoKey {
				t.Fatalf("CONSUME: %v %v %v", deliver, err, FailureOf(r))
			}
		}
	}
}

// fetchesOf is a poll's result with the records of one partition.
func fetchesOf(topic string, partition int32, rs []*kgo.Record) kgo.Fetches {
	return kgo.Fetches{{Topics: []kgo.FetchTopic{{Topic: topic, Partitions: []kgo.FetchPartition{{Partition: partition, Records: rs}}}}}}
}

// readableAndUnreadable are the consumer's keys, an encryptor for them, and one for a recipient it has no key of.
func readableAndUnreadable(t *testing.T) (keys KeyReader, enc, encOther *Encryptor) {
	keys = staticKeys(t, map[string]crypto.PrivateKey{"x": testX25519(t)})
	enc, _ = NewEncryptor(EncryptorConfig{Keys: keys, Recipients: []string{"x"}})
	other := staticKeys(t, map[string]crypto.PrivateKey{"y": testX25519(t)})
	encOther, _ = NewEncryptor(EncryptorConfig{Keys: other, Recipients: []string{"y"}})
	return keys, enc, encOther
}

// idleClient is a franz-go client that never connects: decryptFetches needs one to wrap.
func idleClient(t *testing.T) *kgo.Client {
	idle, err := kgo.NewClient(kgo.SeedBrokers("127.0.0.1:1"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(idle.Close)
	return idle
}

func TestClientAppliesTheFailureActionPerPartition(t *testing.T) {
	ctx := context.Background()
	keys, enc, encOther := readableAndUnreadable(t)
	batch := func() []*kgo.Record {
		var rs []*kgo.Record
		for i := 0; i < 4; i++ {
			r := kgoRecord("t", i)
			r.Offset = int64(i)
			e := enc
			if i == 1 {
				e = encOther // a record the consumer cannot read
			}
			if err := e.EncryptRecord(ctx, r); err != nil {
				t.Fatal(err)
			}
			rs = append(rs, r)
		}
		return rs
	}
	idle := idleClient(t)
	for _, action := range []FailureAction{Fail, Discard, Consume} {
		dec, _ := NewDecryptor(DecryptorConfig{Keys: keys, OnFailure: action})
		var heard []int64
		c := NewClient(idle, ClientConfig{Decryptor: dec, OnFailure: func(r *kgo.Record, e *Error) { heard = append(heard, r.Offset) }})
		fs := c.decryptFetches(ctx, fetchesOf("t", 2, batch()))
		p := fs[0].Topics[0].Partitions[0]
		var offsets []int64
		for _, r := range p.Records {
			offsets = append(offsets, r.Offset)
		}
		got := fmt.Sprint(offsets, StatusOf(p.Records[0]), len(heard))
		switch action {
		case Fail:
			var re *RecordError
			if got != "[0] decrypted 1" || !errors.As(p.Err, &re) || re.Offset != 1 || re.Err.Reason != ReasonNoKey {
				t.Fatalf("FAIL: %s %v", got, p.Err)
			}
			if len(fs.Errors()) != 1 {
				t.Fatalf("FAIL: Errors() = %v", fs.Errors())
			}
		case Discard:
			if got != "[0 2 3] decrypted 1" || p.Err != nil {
				t.Fatalf("DISCARD: %s %v", got, p.Err)
			}
		case Consume:
			if got != "[0 1 2 3] decrypted 1" || p.Err != nil || StatusOf(p.Records[1]) != StatusFailed || FailureOf(p.Records[1]).Reason != ReasonNoKey {
				t.Fatalf("CONSUME: %s %v", got, p.Err)
			}
		}
	}
}

// TestClientDecryptsEveryPartitionOfAPoll gives the Client a poll of two topics' partitions: every
// partition keeps its order and applies the failure action on its own, and OnFailure hears the failures in
// the poll's order.
func TestClientDecryptsEveryPartitionOfAPoll(t *testing.T) {
	ctx := context.Background()
	keys, enc, encOther := readableAndUnreadable(t)
	const perPartition = 40
	// unreadable[topic index][partition] is the offset of the one record the consumer cannot read, or -1.
	unreadable := [2][3]int64{{-1, 7, -1}, {-1, -1, 0}}
	poll := func() kgo.Fetches {
		var f kgo.Fetch
		for ti, topic := range []string{"a", "b"} {
			ft := kgo.FetchTopic{Topic: topic}
			for p := range int32(3) {
				fp := kgo.FetchPartition{Partition: p}
				for i := range perPartition {
					r := kgoRecord(topic, i)
					r.Partition, r.Offset = p, int64(i)
					e := enc
					if int64(i) == unreadable[ti][p] {
						e = encOther
					}
					if err := e.EncryptRecord(ctx, r); err != nil {
						t.Fatal(err)
					}
					fp.Records = append(fp.Records, r)
				}
				ft.Partitions = append(ft.Partitions, fp)
			}
			f.Topics = append(f.Topics, ft)
		}
		return kgo.Fetches{f}
	}
	idle := idleClient(t)
	for _, action := range []FailureAction{Fail, Discard, Consume} {
		dec, _ := NewDecryptor(DecryptorConfig{Keys: keys, OnFailure: action})
		var heard []string
		c := NewClient(idle, ClientConfig{Decryptor: dec, OnFailure: func(r *kgo.Record, e *Error) {
			heard = append(heard, fmt.Sprintf("%s-%d@%d", r.Topic, r.Partition, r.Offset))
		}})
		fs := c.decryptFetches(ctx, poll())
		if got := fmt.Sprint(heard); got != "[a-1@7 b-2@0]" {
			t.Fatalf("%s: OnFailure heard %s", action, got)
		}
		for ti, ft := range fs[0].Topics {
			for _, fp := range ft.Partitions {
				bad := unreadable[ti][fp.Partition]
				want := perPartition
				switch {
				case bad < 0:
				case action == Fail:
					want = int(bad)
				case action == Discard:
					want = perPartition - 1
				}
				if len(fp.Records) != want || (bad >= 0 && action == Fail) != (fp.Err != nil) {
					t.Fatalf("%s: %s-%d kept %d records (want %d), err %v", action, ft.Topic, fp.Partition, len(fp.Records), want, fp.Err)
				}
				last := int64(-1)
				for _, r := range fp.Records {
					if r.Offset <= last {
						t.Fatalf("%s: %s-%d out of order at %d", action, ft.Topic, fp.Partition, r.Offset)
					}
					last = r.Offset
					if r.Offset == bad {
						if StatusOf(r) != StatusFailed {
							t.Fatalf("%s: %s-%d@%d is %s", action, ft.Topic, fp.Partition, r.Offset, StatusOf(r))
						}
						continue
					}
					s := sample(int(r.Offset))
					if StatusOf(r) != StatusDecrypted || DiffRecords(Record{Key: r.Key, Value: r.Value, Headers: fromKgoHeaders(r.Headers)}, s) != "" {
						t.Fatalf("%s: %s-%d@%d not decrypted as produced", action, ft.Topic, fp.Partition, r.Offset)
					}
				}
			}
		}
	}
}

// TestClientAgainstBroker runs the Client through a real broker when LEDGERLINE_E2E_BOOTSTRAP names one:
// ProduceSync encrypts, PollFetches decrypts, FAIL stops at a record it cannot read and sets the fetch
// offset back to it, so the next poll fails on it again; SetOffsets past it goes on.
func TestClientAgainstBroker(t *testing.T) {
	bootstrap := os.Getenv("LEDGERLINE_E2E_BOOTSTRAP")
	if bootstrap == "" {
		t.Skip("LEDGERLINE_E2E_BOOTSTRAP (HOST:PORT of a running broker) is not set")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	topic := fmt.Sprintf("e2e-go-client-%d", time.Now().UnixNano())
	keys := staticKeys(t, map[string]crypto.PrivateKey{"x": testX25519(t)})
	other := staticKeys(t, map[string]crypto.PrivateKey{"y": testX25519(t)})
	encX, _ := NewEncryptor(EncryptorConfig{Keys: keys, Recipients: []string{"x"}, SealHeaders: []string{"h-secret"}})
	encY, _ := NewEncryptor(EncryptorConfig{Keys: other, Recipients: []string{"y"}})
	producer := func(enc *Encryptor) *Client {
		cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.AllowAutoTopicCreation(), kgo.DefaultProduceTopic(topic))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return NewClient(cl, ClientConfig{Encryptor: enc})
	}
	px, py := producer(encX), producer(encY)
	for i := 0; i < 6; i++ {
		p := px
		if i == 3 {
			p = py
		}
		if err := p.ProduceSync(ctx, kgoRecord(topic, i)).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	dec, _ := NewDecryptor(DecryptorConfig{Keys: keys})
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	c := NewClient(cl, ClientConfig{Decryptor: dec})
	var got []int64
	failures := 0
	for len(got) < 5 && ctx.Err() == nil {
		fs := c.PollFetches(ctx)
		fs.EachRecord(func(r *kgo.Record) {
			if StatusOf(r) != StatusDecrypted || DiffRecords(Record{Key: r.Key, Value: r.Value, Headers: fromKgoHeaders(r.Headers)}, sample(int(r.Offset))) != "" {
				t.Fatalf("record %d: %s", r.Offset, StatusOf(r))
			}
			got = append(got, r.Offset)
		})
		for _, fe := range fs.Errors() {
			var re *RecordError
			if !errors.As(fe.Err, &re) {
				t.Fatalf("fetch error %v", fe.Err)
			}
			if re.Offset != 3 || re.Err.Reason != ReasonNoKey {
				t.Fatalf("failed at %d: %v", re.Offset, re.Err)
			}
			failures++
			if failures == 2 {
				cl.SetOffsets(map[string]map[int32]kgo.EpochOffset{topic: {re.Partition: {Epoch: -1, Offset: re.Offset + 1}}})
			}
		}
	}
	if fmt.Sprint(got) != "[0 1 2 4 5]" || failures != 2 {
		t.Fatalf("delivered %v with %d failures, want [0 1 2 4 5] after failing twice at 3", got, failures)
	}
}
