// The franz-go (kgo + kadm) side of the compatibility suite; steps as in compat/README.md.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	c "ledgerline.dev/compat/internal/common"
)

func errName(err error) string {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Message
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "DeadlineExceeded"
	case errors.Is(err, kgo.ErrRecordTimeout):
		return "ErrRecordTimeout"
	case errors.Is(err, kgo.ErrMaxBuffered):
		return "ErrMaxBuffered"
	}
	if inner := errors.Unwrap(err); inner != nil {
		return errName(inner)
	}
	return fmt.Sprintf("%T", err)
}

type fr struct {
	*c.Run
	bootstrap string
	adm       *kadm.Client
}

func ctx() (context.Context, context.CancelFunc) { return context.WithTimeout(context.Background(), c.Wait) }

func (r *fr) client(opts ...kgo.Opt) *kgo.Client {
	base := []kgo.Opt{
		kgo.SeedBrokers(strings.Split(r.bootstrap, ",")...),
		kgo.RequestTimeoutOverhead(10 * time.Second),
		kgo.ProducerBatchMaxBytes(4 * c.Big),
		kgo.MaxBufferedBytes(64 * c.Big),
		kgo.ProducerLinger(5 * time.Millisecond),
		kgo.RecordDeliveryTimeout(c.Wait),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
	}
	if os.Getenv("COMPAT_DEBUG") != "" {
		base = append(base, kgo.WithLogger(kgo.BasicLogger(os.Stderr, kgo.LogLevelDebug, nil)))
	}
	cl, err := kgo.NewClient(append(base, opts...)...)
	c.Must(err)
	r.Closing(cl.Close)
	return cl
}

func (r *fr) admin() *kadm.Client {
	if r.adm == nil {
		r.adm = kadm.NewClient(r.client())
	}
	return r.adm
}

func str(s string) *string { return &s }

func (r *fr) create(name string, partitions int32, rf int16, cfg map[string]*string) error {
	cx, cancel := ctx()
	defer cancel()
	resp, err := r.admin().CreateTopics(cx, partitions, rf, cfg, name)
	if err != nil {
		return err
	}
	return resp[name].Err
}

func (r *fr) partitions(name string) (kadm.PartitionDetails, error) {
	cx, cancel := ctx()
	defer cancel()
	td, err := r.admin().ListTopics(cx, name)
	if err != nil {
		return nil, err
	}
	d, ok := td[name]
	if !ok {
		return nil, kerr.UnknownTopicOrPartition
	}
	if d.Err != nil {
		return nil, d.Err
	}
	return d.Partitions, nil
}

func (r *fr) createReady(name string, partitions int32, cfg map[string]*string) {
	c.Must(r.create(name, partitions, 1, cfg))
	c.WaitFor(func() bool {
		ps, err := r.partitions(name)
		if err != nil || int32(len(ps)) != partitions {
			return false
		}
		for _, p := range ps {
			if p.Leader < 0 {
				return false
			}
		}
		return true
	}, c.Wait)
}

func (r *fr) listNames() []string {
	cx, cancel := ctx()
	defer cancel()
	td, err := r.admin().ListTopics(cx)
	c.Must(err)
	return td.Names()
}

func headersOf(hs []c.Header) []kgo.RecordHeader {
	out := []kgo.RecordHeader{}
	for _, h := range hs {
		out = append(out, kgo.RecordHeader{Key: h.Key, Value: h.Value})
	}
	return out
}

func fromKgo(hs []kgo.RecordHeader) []c.Header {
	out := []c.Header{}
	for _, h := range hs {
		out = append(out, c.Header{Key: h.Key, Value: h.Value})
	}
	return out
}

// produce sends records and waits for each; the result per record is its offset or {"error": NAME}.
func (r *fr) produce(cl *kgo.Client, recs []*kgo.Record) []any {
	out := make([]any, len(recs))
	var wg sync.WaitGroup
	cx, cancel := ctx()
	defer cancel()
	for i, rec := range recs {
		wg.Add(1)
		i := i
		cl.Produce(cx, rec, func(rec *kgo.Record, err error) {
			if err != nil {
				out[i] = map[string]any{"error": errName(err)}
			} else {
				out[i] = rec.Offset
			}
			wg.Done()
		})
	}
	wg.Wait()
	return out
}

func (r *fr) produceValues(topic, stem string, from, to int) {
	cl := r.client()
	recs := []*kgo.Record{}
	for i := from; i < to; i++ {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: 0, Value: []byte(fmt.Sprintf("%s%d", stem, i))})
	}
	for _, o := range r.produce(cl, recs) {
		if m, ok := o.(map[string]any); ok {
			c.Must(fmt.Errorf("produce failed: %v", m["error"]))
		}
	}
}

// pollUntil polls until count records arrived or the deadline; fetch errors end the poll and are returned.
func pollUntil(cl *kgo.Client, count int) ([]*kgo.Record, error) {
	out := []*kgo.Record{}
	deadline := time.Now().Add(c.Wait)
	for len(out) < count && time.Now().Before(deadline) {
		cx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		fs := cl.PollFetches(cx)
		cancel()
		for _, fe := range fs.Errors() {
			if !errors.Is(fe.Err, context.DeadlineExceeded) && !errors.Is(fe.Err, context.Canceled) {
				return out, fe.Err
			}
		}
		fs.EachRecord(func(rec *kgo.Record) { out = append(out, rec) })
	}
	if len(out) > count {
		out = out[:count]
	}
	return out, nil
}

func offsetsOf(rs []*kgo.Record) []int64 {
	out := []int64{}
	for _, rec := range rs {
		out = append(out, rec.Offset)
	}
	return out
}

func (r *fr) readFrom(topic string, at kgo.Offset, count int, opts ...kgo.Opt) []map[string]any {
	cl := r.client(append([]kgo.Opt{kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {0: at}})}, opts...)...)
	rs, err := pollUntil(cl, count)
	c.Must(err)
	out := []map[string]any{}
	for _, rec := range rs {
		out = append(out, c.RecordRepr(rec.Partition, rec.Offset, rec.Key, rec.Value, fromKgo(rec.Headers)))
	}
	return out
}

func (r *fr) listOffset(f func(context.Context, ...string) (kadm.ListedOffsets, error), topic string) any {
	return r.Attempt(func() (any, error) {
		cx, cancel := ctx()
		defer cancel()
		lo, err := f(cx, topic)
		if err != nil {
			return nil, err
		}
		o, ok := lo.Lookup(topic, 0)
		if !ok {
			return nil, kerr.UnknownTopicOrPartition
		}
		return o.Offset, o.Err
	})
}

func (r *fr) describeConfigs(topic string, keys []string) (map[string]any, error) {
	cx, cancel := ctx()
	defer cancel()
	rcs, err := r.admin().DescribeTopicConfigs(cx, topic)
	if err != nil {
		return nil, err
	}
	rc, err := rcs.On(topic, nil)
	if err != nil {
		return nil, err
	}
	if rc.Err != nil {
		return nil, rc.Err
	}
	out := map[string]any{}
	for _, k := range keys {
		out[k] = nil
		for _, cfg := range rc.Configs {
			if cfg.Key == k {
				out[k] = map[string]any{"value": cfg.MaybeValue(), "source": cfg.Source.String(), "sensitive": cfg.Sensitive}
			}
		}
	}
	return out, nil
}

func (r *fr) myGroups() []any {
	cx, cancel := ctx()
	defer cancel()
	lg, err := r.admin().ListGroups(cx)
	c.Must(err)
	out := []any{}
	for _, g := range lg.Sorted() {
		if len(g.Group) >= len(r.Prefix) && g.Group[:len(r.Prefix)] == r.Prefix {
			out = append(out, map[string]any{"group": g.Group, "state": g.State, "protocol": g.ProtocolType, "type": g.GroupType})
		}
	}
	return out
}

func (r *fr) describeGroup(g string) (any, error) {
	cx, cancel := ctx()
	defer cancel()
	dg, err := r.admin().DescribeGroups(cx, g)
	if err != nil {
		return nil, err
	}
	d := dg[g]
	if d.Err != nil {
		return nil, d.Err
	}
	return map[string]any{"state": d.State, "members": len(d.Members), "protocolType": d.ProtocolType, "assignor": d.Protocol}, nil
}

func (r *fr) committed(g, topic string) any {
	return r.Attempt(func() (any, error) {
		cx, cancel := ctx()
		defer cancel()
		or, err := r.admin().FetchOffsets(cx, g)
		if err != nil {
			return nil, err
		}
		o, ok := or.Lookup(topic, 0)
		if !ok {
			return nil, nil
		}
		return o.At, o.Err
	})
}

func (r *fr) deleteGroup(g string) (any, error) {
	cx, cancel := ctx()
	defer cancel()
	resp, err := r.admin().DeleteGroups(cx, g)
	if err != nil {
		return nil, err
	}
	return nil, resp[g].Err
}

// ------------------------------------------------------------------------------------------ scenarios

func metadata(r *fr) {
	t := r.Prefix
	r.createReady(t, 3, nil)
	names := r.listNames()
	r.Result["listed"] = r.Mine(names)
	ps, err := r.partitions(t)
	c.Must(err)
	parts := []any{}
	for _, p := range ps.Sorted() {
		parts = append(parts, map[string]any{"partition": p.Partition, "leaderKnown": p.Leader >= 0, "replicas": len(p.Replicas), "isr": len(p.ISR)})
	}
	r.Result["partitions"] = parts
	cx, cancel := ctx()
	defer cancel()
	md, err := r.admin().BrokerMetadata(cx)
	c.Must(err)
	r.Result["brokers"] = len(md.Brokers)
	r.Result["controllerKnown"] = md.Controller >= 0
	r.Result["missing"] = r.Attempt(func() (any, error) { _, err := r.partitions(t + "-missing"); return nil, err })
	found := false
	for _, n := range names {
		found = found || n == t
	}
	r.Check(found, "ListTopics does not contain the created topic")
}

func createTopic(r *fr) {
	t := r.Prefix
	cfg := map[string]*string{"cleanup.policy": str("compact"), "retention.ms": str("3600000"), "max.message.bytes": str("2000000")}
	r.Result["create"] = r.Attempt(func() (any, error) { return nil, r.create(t, 3, 1, cfg) })
	c.WaitFor(func() bool { ps, err := r.partitions(t); return err == nil && len(ps) == 3 }, c.Wait)
	ps, err := r.partitions(t)
	c.Must(err)
	r.Result["partitions"] = len(ps)
	configs, err := r.describeConfigs(t, []string{"cleanup.policy", "max.message.bytes", "retention.ms"})
	c.Must(err)
	r.Result["configs"] = configs
	r.Result["again"] = r.Attempt(func() (any, error) { return nil, r.create(t, 3, 1, nil) })
	r.Result["badConfig"] = r.Attempt(func() (any, error) {
		return nil, r.create(t+"-badcfg", 1, 1, map[string]*string{"cleanup.policy": str("bogus")})
	})
	r.Result["zeroPartitions"] = r.Attempt(func() (any, error) { return nil, r.create(t+"-zero", 0, 1, nil) })
	r.Result["replicationFactor3"] = r.Attempt(func() (any, error) { return nil, r.create(t+"-rf3", 1, 3, nil) })
	r.Result["listed"] = r.Mine(r.listNames())
}

func produceConsume(r *fr) {
	codecs := map[string]any{}
	for _, codec := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		t := r.Prefix + "-" + codec
		r.createReady(t, 1, map[string]*string{"max.message.bytes": str("4194304")})
		comp := map[string]kgo.CompressionCodec{
			"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(), "snappy": kgo.SnappyCompression(),
			"lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression(),
		}[codec]
		cl := r.client(kgo.ProducerBatchCompression(comp))
		recs := []*kgo.Record{}
		for _, s := range c.Standard() {
			recs = append(recs, &kgo.Record{Topic: t, Partition: 0, Key: s.Key, Value: s.Value, Headers: headersOf(s.Headers)})
		}
		acks := r.produce(cl, recs)
		read := r.readFrom(t, kgo.NewOffset().AtStart(), 5)
		codecs[codec] = map[string]any{"acks": acks, "records": read}
		r.Check(len(read) == 5, "%s: read back %d of 5 records", codec, len(read))
		for i, rec := range read {
			r.Check(c.SameJSON(rec, c.StandardRepr(i)), "%s: record %d read back differs from what was produced", codec, i)
		}
	}
	r.Result["codecs"] = codecs
}

func consumeOffsets(r *fr) {
	t := r.Prefix
	r.createReady(t, 1, nil)
	base := time.Now().Truncate(time.Second).Add(-time.Minute)
	// franz-go measures the delivery timeout from a record's timestamp, and these are a minute old:
	// no delivery timeout here; produce() bounds the wait with its context instead.
	cl := r.client(kgo.RecordDeliveryTimeout(0))
	recs := []*kgo.Record{}
	for i := 0; i < 10; i++ {
		recs = append(recs, &kgo.Record{Topic: t, Partition: 0, Value: []byte(fmt.Sprintf("m%d", i)), Timestamp: base.Add(time.Duration(i) * time.Second)})
	}
	r.Result["acks"] = r.produce(cl, recs)
	cons := r.client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{t: {0: kgo.NewOffset().AtStart()}}))
	rs, err := pollUntil(cons, 10)
	c.Must(err)
	earliest := []any{}
	for _, rec := range rs {
		earliest = append(earliest, map[string]any{"o": rec.Offset, "v": c.Repr(rec.Value), "ts": rec.Timestamp.Sub(base).Milliseconds()})
	}
	r.Result["earliest"] = earliest
	baseMs := base.UnixMilli()
	adm := r.admin()
	r.Result["listOffsets"] = map[string]any{
		"earliest":  r.listOffset(adm.ListStartOffsets, t),
		"latest":    r.listOffset(adm.ListEndOffsets, t),
		"ts+4500":   r.listOffset(func(cx context.Context, ts ...string) (kadm.ListedOffsets, error) { return adm.ListOffsetsAfterMilli(cx, baseMs+4500, ts...) }, t),
		"ts+100000": r.listOffset(func(cx context.Context, ts ...string) (kadm.ListedOffsets, error) { return adm.ListOffsetsAfterMilli(cx, baseMs+100000, ts...) }, t),
	}
	byTime := r.client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{t: {0: kgo.NewOffset().AfterMilli(baseMs + 4500)}}))
	rs, err = pollUntil(byTime, 5)
	c.Must(err)
	r.Result["fromTimestamp"] = offsetsOf(rs)
	seen := &fetchAfterList{}
	latest := r.client(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{t: {0: kgo.NewOffset().AtEnd()}}), kgo.WithHooks(seen))
	// The consumer resolves "end" with ListOffsets, then fetches from there: produce only once it has.
	c.WaitFor(seen.done, c.Wait)
	more := []*kgo.Record{}
	for i := 10; i < 12; i++ {
		more = append(more, &kgo.Record{Topic: t, Partition: 0, Value: []byte(fmt.Sprintf("m%d", i)), Timestamp: base.Add(time.Duration(i) * time.Second)})
	}
	r.produce(cl, more)
	rs, err = pollUntil(latest, 2)
	c.Must(err)
	r.Result["fromLatest"] = offsetsOf(rs)
	r.Check(len(earliest) == 10, "earliest read %d of 10", len(earliest))
}

func groupClient(r *fr, g, t string, serverSide bool, extra ...kgo.Opt) *kgo.Client {
	opts := []kgo.Opt{kgo.ConsumerGroup(g), kgo.ConsumeTopics(t), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.SessionTimeout(10 * time.Second), kgo.HeartbeatInterval(500 * time.Millisecond)}
	if serverSide {
		opts = append(opts, kgo.ServerSideBalancer(), kgo.Balancers(kgo.RangeBalancer()))
	}
	return r.client(append(opts, extra...)...)
}

func groupResume(r *fr, p string, serverSide bool) map[string]any {
	t, g := p, p+"-g"
	r.createReady(t, 1, nil)
	r.produceValues(t, "v", 0, 10)
	out := map[string]any{}
	a := groupClient(r, g, t, serverSide)
	rs, err := pollUntil(a, 4)
	c.Must(err)
	out["firstRead"] = offsetsOf(rs)
	cx, cancel := ctx()
	defer cancel()
	var commitErr error
	a.CommitOffsetsSync(cx, map[string]map[int32]kgo.EpochOffset{t: {0: {Epoch: -1, Offset: 4}}},
		func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
			commitErr = err
			if err == nil {
				for _, rt := range resp.Topics {
					for _, rp := range rt.Partitions {
						if e := kerr.ErrorForCode(rp.ErrorCode); e != nil {
							commitErr = e
						}
					}
				}
			}
		})
	c.Must(commitErr)
	out["committedAfterFirst"] = r.committed(g, t)
	a.Close()
	b := groupClient(r, g, t, serverSide)
	rs, err = pollUntil(b, 6)
	c.Must(err)
	out["secondRead"] = offsetsOf(rs)
	c.Must(b.CommitUncommittedOffsets(cx))
	b.Close()
	out["committedFinal"] = r.committed(g, t)
	return out
}

func groupSplit(r *fr, p string, serverSide bool) map[string]any {
	t, g := p, p+"-g"
	r.createReady(t, 4, nil)
	var mu sync.Mutex
	assigned := []map[int32]bool{{}, {}}
	seen := []map[int32]bool{{}, {}}
	members := make([]*kgo.Client, 2)
	for i := range members {
		i := i
		members[i] = groupClient(r, g, t, serverSide,
			kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
				mu.Lock()
				for _, p := range m[t] {
					assigned[i][p] = true
				}
				mu.Unlock()
			}),
			kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
				mu.Lock()
				for _, p := range m[t] {
					delete(assigned[i], p)
				}
				mu.Unlock()
			}),
			kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
				mu.Lock()
				for _, p := range m[t] {
					delete(assigned[i], p)
				}
				mu.Unlock()
			}))
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range members {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				cx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
				fs := members[i].PollFetches(cx)
				cancel()
				fs.EachRecord(func(rec *kgo.Record) {
					mu.Lock()
					seen[i][rec.Partition] = true
					mu.Unlock()
				})
			}
		}(i)
	}
	snapshot := func(m map[int32]bool) []int32 {
		mu.Lock()
		defer mu.Unlock()
		out := []int32{}
		for p := range m {
			out = append(out, p)
		}
		sort.Slice(out, func(a, b int) bool { return out[a] < out[b] })
		return out
	}
	balanced := func() bool {
		x, y := snapshot(assigned[0]), snapshot(assigned[1])
		u := map[int32]bool{}
		for _, p := range append(append([]int32{}, x...), y...) {
			u[p] = true
		}
		return len(x) > 0 && len(y) > 0 && len(u) == 4 && len(x)+len(y) == 4
	}
	stable := c.WaitFor(balanced, c.Wait)
	if stable {
		cl := r.client()
		recs := []*kgo.Record{}
		for i := int32(0); i < 4; i++ {
			recs = append(recs, &kgo.Record{Topic: t, Partition: i, Value: []byte(fmt.Sprintf("p%d", i))})
		}
		r.produce(cl, recs)
		c.WaitFor(func() bool { return len(snapshot(seen[0]))+len(snapshot(seen[1])) >= 4 }, c.Wait)
	}
	close(stop)
	wg.Wait()
	final := [][]int32{snapshot(assigned[0]), snapshot(assigned[1])}
	for _, m := range members {
		m.Close()
	}
	sizes := []int{len(final[0]), len(final[1])}
	sort.Ints(sizes)
	consumed := map[int32]bool{}
	owned := true
	for i := range seen {
		mine := map[int32]bool{}
		for _, p := range final[i] {
			mine[p] = true
		}
		for _, p := range snapshot(seen[i]) {
			consumed[p] = true
			owned = owned && mine[p]
		}
	}
	cons := []int32{}
	for p := range consumed {
		cons = append(cons, p)
	}
	sort.Slice(cons, func(a, b int) bool { return cons[a] < cons[b] })
	r.Check(stable, "the two members never split the 4 partitions between them")
	// franz-go's default balancer (cooperative-sticky) and KIP-848's server-side assignors are sticky:
	// which partitions a member ends with depends on the order of joins, so only the split is compared.
	return map[string]any{"balanced": stable, "sizes": sizes, "consumedPartitions": cons, "consumedByOwner": owned}
}

func idempotent(r *fr) {
	t := r.Prefix
	r.createReady(t, 1, nil)
	cl := r.client() // franz-go producers are idempotent by default
	acks := []any{}
	for batch := 0; batch < 4; batch++ {
		recs := []*kgo.Record{}
		for i := batch * 5; i < batch*5+5; i++ {
			recs = append(recs, &kgo.Record{Topic: t, Partition: 0, Value: []byte(fmt.Sprintf("i%d", i))})
		}
		acks = append(acks, r.produce(cl, recs)...)
	}
	r.Result["acks"] = acks
	read := r.readFrom(t, kgo.NewOffset().AtStart(), 20)
	offs, vals := []any{}, []any{}
	for _, rec := range read {
		offs = append(offs, rec["o"])
		vals = append(vals, rec["v"])
	}
	r.Result["offsets"] = offs
	r.Result["values"] = vals
	r.Check(len(read) == 20, "read back %d of 20", len(read))
}

func deleteTopic(r *fr) {
	t := r.Prefix
	r.createReady(t, 2, nil)
	r.produceValues(t, "d", 0, 1)
	r.Result["listedBefore"] = r.Mine(r.listNames())
	del := func() (any, error) {
		cx, cancel := ctx()
		defer cancel()
		resp, err := r.admin().DeleteTopics(cx, t)
		if err != nil {
			return nil, err
		}
		return nil, resp[t].Err
	}
	r.Result["delete"] = r.Attempt(del)
	r.Result["goneFromList"] = c.WaitFor(func() bool {
		for _, n := range r.listNames() {
			if n == t {
				return false
			}
		}
		return true
	}, c.Wait)
	r.Result["describeAfter"] = r.Attempt(func() (any, error) { _, err := r.partitions(t); return nil, err })
	r.Result["deleteAgain"] = r.Attempt(del)
	r.Result["recreate"] = r.Attempt(func() (any, error) {
		deadline := time.Now().Add(c.Wait)
		for {
			err := r.create(t, 1, 1, nil)
			if err == nil || time.Now().After(deadline) || !(errors.Is(err, kerr.TopicAlreadyExists) || errors.Is(err, kerr.UnknownTopicOrPartition)) {
				return nil, err
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
	c.WaitFor(func() bool { ps, err := r.partitions(t); return err == nil && len(ps) == 1 }, c.Wait)
	r.Result["recreatedLatest"] = r.listOffset(r.admin().ListEndOffsets, t)
}

func configs(r *fr) {
	t := r.Prefix
	r.createReady(t, 1, map[string]*string{"retention.ms": str("86400000")})
	keys := []string{"cleanup.policy", "max.message.bytes", "retention.ms", "segment.bytes"}
	desc := func(topic string) (any, error) { return r.describeConfigs(topic, keys) }
	r.Result["initial"] = r.Attempt(func() (any, error) { return desc(t) })
	alter := func(cfgs ...kadm.AlterConfig) func() (any, error) {
		return func() (any, error) {
			cx, cancel := ctx()
			defer cancel()
			resp, err := r.admin().AlterTopicConfigs(cx, cfgs, t)
			if err != nil {
				return nil, err
			}
			for _, a := range resp {
				if a.Err != nil {
					return nil, a.Err
				}
			}
			return nil, nil
		}
	}
	r.Result["alter"] = r.Attempt(alter(kadm.AlterConfig{Op: kadm.SetConfig, Name: "retention.ms", Value: str("3600000")},
		kadm.AlterConfig{Op: kadm.SetConfig, Name: "cleanup.policy", Value: str("compact")}))
	// A change is applied through the broker's metadata log; a describe right after may still see the
	// old value (on Kafka too): wait, bounded, until it shows, then report what is seen.
	settle := func(want string) {
		c.WaitFor(func() bool {
			m, err := r.describeConfigs(t, []string{"retention.ms"})
			if err != nil || m["retention.ms"] == nil {
				return false
			}
			v, _ := m["retention.ms"].(map[string]any)["value"].(string)
			return v == want
		}, c.Wait)
	}
	settle("3600000")
	r.Result["afterAlter"] = r.Attempt(func() (any, error) { return desc(t) })
	r.Result["reset"] = r.Attempt(alter(kadm.AlterConfig{Op: kadm.DeleteConfig, Name: "retention.ms"}))
	settle("604800000")
	r.Result["afterReset"] = r.Attempt(func() (any, error) { return desc(t) })
	r.Result["invalidValue"] = r.Attempt(alter(kadm.AlterConfig{Op: kadm.SetConfig, Name: "retention.ms", Value: str("abc")}))
	r.Result["unknownKey"] = r.Attempt(alter(kadm.AlterConfig{Op: kadm.SetConfig, Name: "no.such.config", Value: str("1")}))
	r.Result["missingTopic"] = r.Attempt(func() (any, error) { return desc(t + "-missing") })
}

func deleteRecords(r *fr) {
	t := r.Prefix
	r.createReady(t, 1, nil)
	r.produceValues(t, "r", 0, 10)
	del := func(before int64) func() (any, error) {
		return func() (any, error) {
			cx, cancel := ctx()
			defer cancel()
			os := kadm.Offsets{}
			os.Add(kadm.Offset{Topic: t, Partition: 0, At: before})
			resp, err := r.admin().DeleteRecords(cx, os)
			if err != nil {
				return nil, err
			}
			d := resp[t][0]
			return d.LowWatermark, d.Err
		}
	}
	r.Result["deleteBefore4"] = r.Attempt(del(4))
	r.Result["earliest"] = r.listOffset(r.admin().ListStartOffsets, t)
	r.Result["latest"] = r.listOffset(r.admin().ListEndOffsets, t)
	read := r.readFrom(t, kgo.NewOffset().AtStart(), 6)
	offs := []any{}
	for _, rec := range read {
		offs = append(offs, rec["o"])
	}
	r.Result["readFromEarliest"] = offs
	r.Result["deleteBeyondEnd"] = r.Attempt(del(20))
	r.Result["deleteAll"] = r.Attempt(del(-1))
	r.Result["earliestAfterAll"] = r.listOffset(r.admin().ListStartOffsets, t)
}

func groupsAdmin(r *fr) {
	t, g, busy := r.Prefix, r.Prefix+"-g", r.Prefix+"-busy"
	r.createReady(t, 1, nil)
	r.produceValues(t, "g", 0, 3)
	cons := groupClient(r, g, t, false)
	_, err := pollUntil(cons, 3)
	c.Must(err)
	cx, cancel := ctx()
	defer cancel()
	c.Must(cons.CommitUncommittedOffsets(cx))
	cons.Close()
	r.Result["listed"] = r.myGroups()
	r.Result["described"] = r.Attempt(func() (any, error) { return r.describeGroup(g) })
	r.Result["offsets"] = r.committed(g, t)
	var mu sync.Mutex
	got := false
	active := groupClient(r, busy, t, false, kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) {
		mu.Lock()
		got = true
		mu.Unlock()
	}))
	c.WaitFor(func() bool {
		cx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		active.PollFetches(cx)
		mu.Lock()
		defer mu.Unlock()
		return got
	}, c.Wait)
	r.Result["deleteActive"] = r.Attempt(func() (any, error) { return r.deleteGroup(busy) })
	active.Close()
	r.Result["delete"] = r.Attempt(func() (any, error) { return r.deleteGroup(g) })
	r.Result["listedAfterDelete"] = r.myGroups()
	r.Result["describedAfterDelete"] = r.Attempt(func() (any, error) { return r.describeGroup(g) })
	r.Result["deleteAgain"] = r.Attempt(func() (any, error) { return r.deleteGroup(g) })
}

func errMissingTopic(r *fr) {
	t := r.Prefix + "-missing"
	cl := r.client(kgo.RecordDeliveryTimeout(5 * time.Second))
	r.Result["produce"] = r.produce(cl, []*kgo.Record{{Topic: t, Partition: 0, Value: []byte("x")}})[0]
	r.Result["describe"] = r.Attempt(func() (any, error) { _, err := r.partitions(t); return nil, err })
	created := false
	for _, n := range r.listNames() {
		created = created || n == t
	}
	r.Result["createdByProduce"] = created
}

func errOffsetOutOfRange(r *fr) {
	t := r.Prefix
	r.createReady(t, 1, nil)
	r.produceValues(t, "o", 0, 5)
	at100 := map[string]map[int32]kgo.Offset{t: {0: kgo.NewOffset().At(100)}}
	none := r.client(kgo.ConsumePartitions(at100), kgo.ConsumeResetOffset(kgo.NoResetOffset()))
	r.Result["resetNone"] = r.Attempt(func() (any, error) {
		rs, err := pollUntil(none, 1)
		if err != nil {
			return nil, err
		}
		if len(rs) > 0 {
			return "records", nil
		}
		return "no error", nil
	})
	earliest := r.client(kgo.ConsumePartitions(at100), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	rs, err := pollUntil(earliest, 5)
	c.Must(err)
	r.Result["resetEarliest"] = offsetsOf(rs)
	seen := &fetchAfterList{}
	latest := r.client(kgo.ConsumePartitions(at100), kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()), kgo.WithHooks(seen))
	// Out of range, the consumer lists the end offset and fetches from there; produce once it has.
	c.WaitFor(seen.done, c.Wait)
	r.produceValues(t, "o", 5, 6)
	rs, err = pollUntil(latest, 1)
	c.Must(err)
	r.Result["resetLatestNext"] = offsetsOf(rs)
}

func errOversize(r *fr) {
	t := r.Prefix
	r.createReady(t, 1, map[string]*string{"max.message.bytes": str("1024")})
	// Uncompressed, as in every client: franz-go's default codec (snappy) would shrink the payload below
	// the limit, and Kafka checks the batch as sent.
	cl := r.client(kgo.ProducerBatchCompression(kgo.NoCompression()))
	r.Result["oversize"] = r.produce(cl, []*kgo.Record{{Topic: t, Partition: 0, Value: c.Pattern(4000)}})[0]
	r.Result["small"] = r.produce(cl, []*kgo.Record{{Topic: t, Partition: 0, Value: []byte("ok")}})[0]
	r.Result["read"] = r.readFrom(t, kgo.NewOffset().AtStart(), 1)
}

func transactions(r *fr) {
	t := r.Prefix
	r.createReady(t, 1, nil)
	cl := r.client(kgo.TransactionalID(r.Prefix + "-tx"))
	txn := func(values []string, commit bool) {
		c.Must(cl.BeginTransaction())
		recs := []*kgo.Record{}
		for _, v := range values {
			recs = append(recs, &kgo.Record{Topic: t, Partition: 0, Value: []byte(v)})
		}
		for _, o := range r.produce(cl, recs) {
			if m, ok := o.(map[string]any); ok {
				c.Must(fmt.Errorf("transactional produce failed: %v", m["error"]))
			}
		}
		cx, cancel := ctx()
		defer cancel()
		c.Must(cl.EndTransaction(cx, kgo.TransactionEndTry(commit)))
	}
	txn([]string{"t0", "t1", "t2"}, true)
	txn([]string{"a0", "a1"}, false)
	txn([]string{"t3"}, true)
	join := func(rs []map[string]any) []string {
		out := []string{}
		for _, rec := range rs {
			out = append(out, fmt.Sprintf("%v:%v", rec["o"], rec["v"]))
		}
		return out
	}
	r.Result["readCommitted"] = join(r.readFrom(t, kgo.NewOffset().AtStart(), 4, kgo.FetchIsolationLevel(kgo.ReadCommitted())))
	r.Result["readUncommitted"] = join(r.readFrom(t, kgo.NewOffset().AtStart(), 6, kgo.FetchIsolationLevel(kgo.ReadUncommitted())))
	r.Result["latest"] = r.listOffset(r.admin().ListEndOffsets, t)
}

// fetchAfterList notes when the client wrote a Fetch request after a ListOffsets request, i.e. a consumer
// has resolved a logical offset (start, end, reset) and fetches from it.
type fetchAfterList struct {
	mu     sync.Mutex
	listed bool
	ok     bool
}

func (f *fetchAfterList) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if err != nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch key {
	case 2: // ListOffsets
		f.listed = true
	case 1: // Fetch
		f.ok = f.ok || f.listed
	}
}

func (f *fetchAfterList) done() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ok
}

func main() {
	wrap := func(f func(r *fr)) func(*c.Run, string) {
		return func(run *c.Run, bootstrap string) { f(&fr{Run: run, bootstrap: bootstrap}) }
	}
	c.Main(map[string]func(*c.Run, string){
		"metadata":        wrap(metadata),
		"create-topic":    wrap(createTopic),
		"produce-consume": wrap(produceConsume),
		"consume-offsets": wrap(consumeOffsets),
		"group-resume":    wrap(func(r *fr) { r.Result = mergeInto(r.Result, groupResume(r, r.Prefix, false)) }),
		"group-split":     wrap(func(r *fr) { r.Result = mergeInto(r.Result, groupSplit(r, r.Prefix, false)) }),
		"group-848": wrap(func(r *fr) {
			r.Result["resume"] = groupResume(r, r.Prefix+"-r", true)
			r.Result["split"] = groupSplit(r, r.Prefix+"-s", true)
		}),
		"idempotent":              wrap(idempotent),
		"delete-topic":            wrap(deleteTopic),
		"configs":                 wrap(configs),
		"delete-records":          wrap(deleteRecords),
		"groups-admin":            wrap(groupsAdmin),
		"err-missing-topic":       wrap(errMissingTopic),
		"err-offset-out-of-range": wrap(errOffsetOutOfRange),
		"err-oversize":            wrap(errOversize),
		"transactions":            wrap(transactions),
	}, errName)
}

func mergeInto(dst, src map[string]any) map[string]any {
	for k, v := range src {
		dst[k] = v
	}
	return dst
}
