package e2e

// The franz-go wrapper: records encrypted and decrypted in place (*kgo.Record, topic from r.Topic), and a
// Client around *kgo.Client whose produce calls encrypt and whose polls decrypt.

import (
	"context"
	"errors"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

func fromKgoHeaders(hs []kgo.RecordHeader) []Header {
	out := make([]Header, len(hs))
	for i, h := range hs {
		out[i] = Header{Key: h.Key, Value: h.Value}
	}
	return out
}

func toKgoHeaders(hs []Header) []kgo.RecordHeader {
	return appendKgoHeaders(make([]kgo.RecordHeader, 0, len(hs)), hs)
}

func appendKgoHeaders(out []kgo.RecordHeader, hs []Header) []kgo.RecordHeader {
	for _, h := range hs {
		out = append(out, kgo.RecordHeader{Key: h.Key, Value: h.Value})
	}
	return out
}

// EncryptRecord seals r in place for r.Topic: Key (a pseudonym when configured), Value (nil stays nil: a
// tombstone stays a tombstone) and Headers (the clear ones, then ledgerline.e2e). Partition, timestamp
// and the rest are untouched. On error r is unchanged.
func (e *Encryptor) EncryptRecord(ctx context.Context, r *kgo.Record) error {
	out, err := e.Encrypt(ctx, r.Topic, Record{Key: r.Key, Value: r.Value, Headers: fromKgoHeaders(r.Headers)})
	if err != nil {
		return err
	}
	r.Key, r.Value, r.Headers = out.Key, out.Value, toKgoHeaders(out.Headers)
	return nil
}

type outcomeKey struct{}

type outcome struct {
	status Status
	err    *Error
}

// The outcomes of records without a context of their own (as franz-go fetches them) share one context
// each: a context is immutable, and most records are decrypted or plaintext.
var (
	decryptedContext = context.WithValue(context.Background(), outcomeKey{}, outcome{status: StatusDecrypted})
	plaintextContext = context.WithValue(context.Background(), outcomeKey{}, outcome{status: StatusPlaintext})
)

func withOutcome(r *kgo.Record, status Status, err *Error) {
	if r.Context == nil && err == nil {
		switch status {
		case StatusDecrypted:
			r.Context = decryptedContext
			return
		case StatusPlaintext:
			r.Context = plaintextContext
			return
		}
	}
	parent := r.Context
	if parent == nil {
		parent = context.Background()
	}
	r.Context = context.WithValue(parent, outcomeKey{}, outcome{status, err})
}

// StatusOf is what DecryptRecord (or the Client's polls) made of r: decrypted, plaintext, or failed
// (delivered as stored under CONSUME). A record that went through neither counts as plaintext.
func StatusOf(r *kgo.Record) Status {
	if r.Context != nil {
		if o, ok := r.Context.Value(outcomeKey{}).(outcome); ok {
			return o.status
		}
	}
	return StatusPlaintext
}

// FailureOf is why r could not be decrypted (a record CONSUME delivered as stored), or nil.
func FailureOf(r *kgo.Record) *Error {
	if r.Context != nil {
		if o, ok := r.Context.Value(outcomeKey{}).(outcome); ok {
			return o.err
		}
	}
	return nil
}

// DecryptRecord opens r in place (topic r.Topic) and applies the failure action. It answers whether to
// deliver r:
//
//   - decrypted or plaintext: true, nil; r holds the original key, value and headers (clear ones first,
//     then the sealed ones; no ledgerline.e2e header);
//   - DISCARD: false, nil;
//   - CONSUME: true, nil; r is unchanged (as stored) and FailureOf(r) says why;
//   - FAIL: false and a *RecordError (holding the *Error) naming r's topic, partition and offset.
//
// StatusOf(r) tells the three outcomes of a delivered record apart.
func (d *Decryptor) DecryptRecord(ctx context.Context, r *kgo.Record) (bool, error) {
	deliver, failure := d.decryptRecord(ctx, r)
	if failure != nil && d.cfg.OnFailure == Fail {
		return false, &RecordError{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Err: failure}
	}
	return deliver, nil
}

// decryptRecord is DecryptRecord answering the failure (if any) whatever the action.
func (d *Decryptor) decryptRecord(ctx context.Context, r *kgo.Record) (deliver bool, failure *Error) {
	in := Record{Key: r.Key, Value: r.Value, Headers: fromKgoHeaders(r.Headers)}
	out, status, err := d.Open(ctx, r.Topic, in)
	if err == nil {
		if status == StatusDecrypted {
			// in holds copies of r's headers, so r's own slice can take the decrypted ones.
			r.Key, r.Value, r.Headers = out.Key, out.Value, appendKgoHeaders(r.Headers[:0], out.Headers)
		}
		withOutcome(r, status, nil)
		return true, nil
	}
	failure = asError(err)
	if d.cfg.OnFailure == Consume {
		withOutcome(r, StatusFailed, failure)
		return true, failure
	}
	return false, failure
}

// Client is a *kgo.Client whose Produce, TryProduce and ProduceSync encrypt each record in place before
// handing it to franz-go, and whose PollFetches and PollRecords decrypt each record fetched. Every other
// method is the embedded client's (commits, offsets, admin requests, Close).
type Client struct {
	*kgo.Client
	enc *Encryptor
	dec *Decryptor
	// onFailure, when set, hears of every record that fails to decrypt, whatever the failure action.
	onFailure func(*kgo.Record, *Error)
}

// ClientConfig names the encryptor (producing; nil: Produce refuses) and the decryptor (consuming; nil:
// records are delivered as fetched) of a Client.
type ClientConfig struct {
	Encryptor *Encryptor
	Decryptor *Decryptor
	// OnFailure is called, on the polling goroutine, for every record that does not decrypt, before the
	// failure action applies (r is as stored).
	OnFailure func(r *kgo.Record, err *Error)
}

// NewClient wraps cl.
func NewClient(cl *kgo.Client, cfg ClientConfig) *Client {
	return &Client{Client: cl, enc: cfg.Encryptor, dec: cfg.Decryptor, onFailure: cfg.OnFailure}
}

// Kgo is the wrapped client, for what must bypass encryption.
func (c *Client) Kgo() *kgo.Client { return c.Client }

var errNoEncryptor = errors.New("e2e: this client has no encryptor (ClientConfig.Encryptor)")

func (c *Client) encrypt(ctx context.Context, r *kgo.Record) error {
	if c.enc == nil {
		return errNoEncryptor
	}
	return c.enc.EncryptRecord(ctx, r)
}

// Produce encrypts r in place, then produces it as kgo.Client.Produce does; an encryption error goes to
// promise (with r unchanged) and nothing is sent. The record promise sees is the encrypted one.
func (c *Client) Produce(ctx context.Context, r *kgo.Record, promise func(*kgo.Record, error)) {
	if err := c.encrypt(ctx, r); err != nil {
		if promise != nil {
			promise(r, err)
		}
		return
	}
	c.Client.Produce(ctx, r, promise)
}

// TryProduce is kgo.Client.TryProduce after encrypting r in place.
func (c *Client) TryProduce(ctx context.Context, r *kgo.Record, promise func(*kgo.Record, error)) {
	if err := c.encrypt(ctx, r); err != nil {
		if promise != nil {
			promise(r, err)
		}
		return
	}
	c.Client.TryProduce(ctx, r, promise)
}

// ProduceSync encrypts and produces rs and waits for all of them, as kgo.Client.ProduceSync does.
func (c *Client) ProduceSync(ctx context.Context, rs ...*kgo.Record) kgo.ProduceResults {
	var (
		wg      sync.WaitGroup
		results = make(kgo.ProduceResults, 0, len(rs))
		mu      sync.Mutex
	)
	promise := func(r *kgo.Record, err error) {
		mu.Lock()
		results = append(results, kgo.ProduceResult{Record: r, Err: err})
		mu.Unlock()
		wg.Done()
	}
	wg.Add(len(rs))
	for _, r := range rs {
		c.Produce(ctx, r, promise)
	}
	wg.Wait()
	return results
}

// PollFetches is kgo.Client.PollFetches with every record decrypted in place (see DecryptRecord) and the
// failure action applied per partition:
//
//   - DISCARD drops the record from its partition's records;
//   - CONSUME leaves it as stored; StatusOf(r) is StatusFailed and FailureOf(r) the reason;
//   - FAIL keeps the partition's records before it, drops it and those after it, sets the partition's
//     Err to a *RecordError (topic, partition, offset and the *Error; see Fetches.Errors) and sets the
//     partition's fetch offset back to the failed record, so nothing after it is skipped: the next poll
//     reads it again. To step over it, SetOffsets to its offset + 1.
func (c *Client) PollFetches(ctx context.Context) kgo.Fetches {
	return c.decryptFetches(ctx, c.Client.PollFetches(ctx))
}

// PollRecords is kgo.Client.PollRecords, decrypting as PollFetches does (DISCARD may leave fewer than
// maxPollRecords).
func (c *Client) PollRecords(ctx context.Context, maxPollRecords int) kgo.Fetches {
	return c.decryptFetches(ctx, c.Client.PollRecords(ctx, maxPollRecords))
}

func (c *Client) decryptFetches(ctx context.Context, fs kgo.Fetches) kgo.Fetches {
	if c.dec == nil {
		return fs
	}
	rewind := map[string]map[int32]kgo.EpochOffset{}
	for fi := range fs {
		for ti := range fs[fi].Topics {
			t := &fs[fi].Topics[ti]
			for pi := range t.Partitions {
				p := &t.Partitions[pi]
				if failed := c.decryptPartition(ctx, p); failed != nil {
					if rewind[t.Topic] == nil {
						rewind[t.Topic] = map[int32]kgo.EpochOffset{}
					}
					rewind[t.Topic][p.Partition] = kgo.EpochOffset{Epoch: -1, Offset: failed.Offset}
				}
			}
		}
	}
	if len(rewind) > 0 {
		c.Client.SetOffsets(rewind)
	}
	return fs
}

// decryptPartition decrypts p's records in place, keeping those to deliver; it answers the record FAIL
// stopped at, or nil.
func (c *Client) decryptPartition(ctx context.Context, p *kgo.FetchPartition) *kgo.Record {
	kept := p.Records[:0]
	var stopped *kgo.Record
	for _, r := range p.Records {
		deliver, failure := c.dec.decryptRecord(ctx, r)
		if failure != nil && c.onFailure != nil {
			c.onFailure(r, failure)
		}
		if failure != nil && c.dec.cfg.OnFailure == Fail {
			p.Err = &RecordError{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Err: failure}
			stopped = r
			break
		}
		if deliver {
			kept = append(kept, r)
		}
	}
	clear(p.Records[len(kept):]) // what is dropped can be collected
	p.Records = kept
	return stopped
}
