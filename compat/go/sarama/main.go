// The sarama side of the compatibility suite; steps as in compat/README.md.
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

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"

	c "ledgerline.dev/compat/internal/common"
)

// errName gives Kafka's name for a broker error code (sarama's KError texts are prose; the code's name
// is taken from franz-go's kerr table, which is only a code-to-name list), else the error's type.
func errName(err error) string {
	var ke sarama.KError
	if errors.As(err, &ke) {
		if e := kerr.ErrorForCode(int16(ke)); e != nil {
			return e.(*kerr.Error).Message
		}
		return fmt.Sprintf("KError(%d)", int16(ke))
	}
	var te *sarama.TopicError
	if errors.As(err, &te) {
		return errName(te.Err)
	}
	var pe *sarama.ProducerError
	if errors.As(err, &pe) {
		return errName(pe.Err)
	}
	var pes sarama.ProducerErrors
	if errors.As(err, &pes) && len(pes) > 0 {
		return errName(pes[0].Err)
	}
	switch {
	case errors.Is(err, sarama.ErrOutOfBrokers):
		return "ErrOutOfBrokers"
	case errors.Is(err, sarama.ErrDeleteRecords):
		return "ErrDeleteRecords"
	case errors.Is(err, context.DeadlineExceeded):
		return "DeadlineExceeded"
	}
	return fmt.Sprintf("%T", err)
}

type sr struct {
	*c.Run
	addrs  []string
	admin_ sarama.ClusterAdmin
	client sarama.Client
}

func (r *sr) config() *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	cfg.ClientID = "compat-sarama"
	cfg.Net.DialTimeout = 10 * time.Second
	cfg.Net.ReadTimeout = 20 * time.Second
	cfg.Net.WriteTimeout = 10 * time.Second
	cfg.Metadata.Retry.Max = 5
	cfg.Metadata.Retry.Backoff = 200 * time.Millisecond
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.MaxMessageBytes = 4 * c.Big
	cfg.Producer.Retry.Max = 3
	cfg.Producer.Retry.Backoff = 200 * time.Millisecond
	cfg.Consumer.Return.Errors = true
	cfg.Consumer.Offsets.AutoCommit.Enable = false
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Group.Session.Timeout = 10 * time.Second
	cfg.Consumer.Group.Heartbeat.Interval = 500 * time.Millisecond
	cfg.Admin.Timeout = c.Wait
	return cfg
}

func (r *sr) admin() sarama.ClusterAdmin {
	if r.admin_ == nil {
		a, err := sarama.NewClusterAdmin(r.addrs, r.config())
		c.Must(err)
		r.admin_ = a
		r.Closing(func() { _ = a.Close() })
	}
	return r.admin_
}

func (r *sr) cl() sarama.Client {
	if r.client == nil {
		cl, err := sarama.NewClient(r.addrs, r.config())
		c.Must(err)
		r.client = cl
		r.Closing(func() { _ = cl.Close() })
	}
	return r.client
}

func (r *sr) producer(tune func(*sarama.Config)) sarama.SyncProducer {
	cfg := r.config()
	if tune != nil {
		tune(cfg)
	}
	p, err := sarama.NewSyncProducer(r.addrs, cfg)
	c.Must(err)
	r.Closing(func() { _ = p.Close() })
	return p
}

func str(s string) *string { return &s }

func (r *sr) create(name string, partitions int32, rf int16, cfg map[string]*string) error {
	return r.admin().CreateTopic(name, &sarama.TopicDetail{NumPartitions: partitions, ReplicationFactor: rf, ConfigEntries: cfg}, false)
}

func (r *sr) describe(name string) (*sarama.TopicMetadata, error) {
	md, err := r.admin().DescribeTopics([]string{name})
	if err != nil {
		return nil, err
	}
	if len(md) != 1 {
		return nil, fmt.Errorf("describe returned %d topics", len(md))
	}
	if !errors.Is(md[0].Err, sarama.ErrNoError) {
		return nil, md[0].Err
	}
	return md[0], nil
}

func (r *sr) createReady(name string, partitions int32, cfg map[string]*string) {
	c.Must(r.create(name, partitions, 1, cfg))
	c.WaitFor(func() bool { d, err := r.describe(name); return err == nil && int32(len(d.Partitions)) == partitions }, c.Wait)
}

func (r *sr) names() []string {
	ts, err := r.admin().ListTopics()
	c.Must(err)
	out := []string{}
	for n := range ts {
		out = append(out, n)
	}
	return out
}

func toSarama(hs []c.Header) []sarama.RecordHeader {
	out := []sarama.RecordHeader{}
	for _, h := range hs {
		out = append(out, sarama.RecordHeader{Key: []byte(h.Key), Value: h.Value})
	}
	return out
}

func fromSarama(hs []*sarama.RecordHeader) []c.Header {
	out := []c.Header{}
	for _, h := range hs {
		out = append(out, c.Header{Key: string(h.Key), Value: h.Value})
	}
	return out
}

func bytesOrNil(b []byte) sarama.Encoder {
	if b == nil {
		return nil
	}
	return sarama.ByteEncoder(b)
}

// send produces messages as one SendMessages call; each result is an offset or {"error": NAME}.
func (r *sr) send(p sarama.SyncProducer, msgs []*sarama.ProducerMessage) []any {
	failed := map[*sarama.ProducerMessage]error{}
	if err := p.SendMessages(msgs); err != nil {
		var pes sarama.ProducerErrors
		if errors.As(err, &pes) {
			for _, pe := range pes {
				failed[pe.Msg] = pe.Err
			}
		} else {
			c.Must(err)
		}
	}
	out := []any{}
	for _, m := range msgs {
		if e, ok := failed[m]; ok {
			out = append(out, map[string]any{"error": errName(e)})
		} else {
			out = append(out, m.Offset)
		}
	}
	return out
}

func values(t string, partition int32, stem string, from, to int) []*sarama.ProducerMessage {
	out := []*sarama.ProducerMessage{}
	for i := from; i < to; i++ {
		out = append(out, &sarama.ProducerMessage{Topic: t, Partition: partition, Value: sarama.StringEncoder(fmt.Sprintf("%s%d", stem, i))})
	}
	return out
}

func (r *sr) produceValues(t, stem string, from, to int) {
	for _, o := range r.send(r.producer(nil), values(t, 0, stem, from, to)) {
		if m, ok := o.(map[string]any); ok {
			c.Must(fmt.Errorf("produce failed: %v", m["error"]))
		}
	}
}

// readFrom consumes partition 0 from offset (or OffsetOldest/OffsetNewest) until count messages.
func (r *sr) readFrom(t string, offset int64, count int, isolation sarama.IsolationLevel) ([]*sarama.ConsumerMessage, error) {
	cfg := r.config()
	cfg.Consumer.IsolationLevel = isolation
	cons, err := sarama.NewConsumer(r.addrs, cfg)
	if err != nil {
		return nil, err
	}
	defer cons.Close()
	pc, err := cons.ConsumePartition(t, 0, offset)
	if err != nil {
		return nil, err
	}
	defer pc.Close()
	return drain(pc, count), nil
}

func drain(pc sarama.PartitionConsumer, count int) []*sarama.ConsumerMessage {
	out := []*sarama.ConsumerMessage{}
	deadline := time.After(c.Wait)
	for len(out) < count {
		select {
		case m := <-pc.Messages():
			out = append(out, m)
		case <-pc.Errors():
		case <-deadline:
			return out
		}
	}
	return out
}

func reprs(ms []*sarama.ConsumerMessage) []map[string]any {
	out := []map[string]any{}
	for _, m := range ms {
		out = append(out, c.RecordRepr(m.Partition, m.Offset, m.Key, m.Value, fromSarama(m.Headers)))
	}
	return out
}

func offsetsOf(ms []*sarama.ConsumerMessage) []int64 {
	out := []int64{}
	for _, m := range ms {
		out = append(out, m.Offset)
	}
	return out
}

func (r *sr) offsetAt(t string, ts int64) any {
	return r.Attempt(func() (any, error) {
		c.Must(r.cl().RefreshMetadata(t))
		return r.cl().GetOffset(t, 0, ts)
	})
}

func (r *sr) describeConfigs(t string, keys []string) (any, error) {
	entries, err := r.admin().DescribeConfig(sarama.ConfigResource{Type: sarama.TopicResource, Name: t})
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for _, k := range keys {
		out[k] = nil
		for _, e := range entries {
			if e.Name == k {
				out[k] = map[string]any{"value": e.Value, "source": e.Source.String(), "readOnly": e.ReadOnly, "sensitive": e.Sensitive, "default": e.Default}
			}
		}
	}
	return out, nil
}

func (r *sr) committed(g, t string) any {
	return r.Attempt(func() (any, error) {
		resp, err := r.admin().ListConsumerGroupOffsets(g, map[string][]int32{t: {0}})
		if err != nil {
			return nil, err
		}
		b := resp.GetBlock(t, 0)
		if b == nil {
			return nil, nil
		}
		if !errors.Is(b.Err, sarama.ErrNoError) {
			return nil, b.Err
		}
		return b.Offset, nil
	})
}

// handler runs a sarama consumer group member: setup records the claims, each message goes to onMsg.
type handler struct {
	mu       sync.Mutex
	assigned []int32
	onMsg    func(sess sarama.ConsumerGroupSession, m *sarama.ConsumerMessage)
}

func (h *handler) Setup(sess sarama.ConsumerGroupSession) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.assigned = nil
	for _, ps := range sess.Claims() {
		h.assigned = append(h.assigned, ps...)
	}
	sort.Slice(h.assigned, func(a, b int) bool { return h.assigned[a] < h.assigned[b] })
	return nil
}

func (h *handler) Cleanup(sarama.ConsumerGroupSession) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.assigned = nil
	return nil
}

func (h *handler) ConsumeClaim(sess sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for {
		select {
		case m, ok := <-claim.Messages():
			if !ok {
				return nil
			}
			h.onMsg(sess, m)
		case <-sess.Context().Done():
			return nil
		}
	}
}

func (h *handler) snapshot() []int32 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]int32{}, h.assigned...)
}

// member starts a group member consuming t until stop() is called (which also closes it).
func (r *sr) member(g, t string, h *handler) (stop func()) {
	group, err := sarama.NewConsumerGroup(r.addrs, g, r.config())
	c.Must(err)
	cx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for cx.Err() == nil {
			if err := group.Consume(cx, []string{t}, h); err != nil && cx.Err() == nil {
				fmt.Fprintln(os.Stderr, "consume:", err)
				time.Sleep(100 * time.Millisecond)
			}
		}
	}()
	go func() {
		for range group.Errors() {
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(c.Wait):
			}
			_ = group.Close()
		})
	}
	r.Closing(stop)
	return stop
}

// ------------------------------------------------------------------------------------------ scenarios

func metadata(r *sr) {
	t := r.Prefix
	r.createReady(t, 3, nil)
	names := r.names()
	r.Result["listed"] = r.Mine(names)
	d, err := r.describe(t)
	c.Must(err)
	parts := []any{}
	sort.Slice(d.Partitions, func(a, b int) bool { return d.Partitions[a].ID < d.Partitions[b].ID })
	for _, p := range d.Partitions {
		parts = append(parts, map[string]any{"partition": p.ID, "leaderKnown": p.Leader >= 0, "replicas": len(p.Replicas), "isr": len(p.Isr)})
	}
	r.Result["partitions"] = parts
	brokers, controller, err := r.admin().DescribeCluster()
	c.Must(err)
	r.Result["brokers"] = len(brokers)
	r.Result["controllerKnown"] = controller >= 0
	r.Result["missing"] = r.Attempt(func() (any, error) { _, err := r.describe(t + "-missing"); return nil, err })
	found := false
	for _, n := range names {
		found = found || n == t
	}
	r.Check(found, "ListTopics does not contain the created topic")
}

func createTopic(r *sr) {
	t := r.Prefix
	cfg := map[string]*string{"cleanup.policy": str("compact"), "retention.ms": str("3600000"), "max.message.bytes": str("2000000")}
	r.Result["create"] = r.Attempt(func() (any, error) { return nil, r.create(t, 3, 1, cfg) })
	c.WaitFor(func() bool { d, err := r.describe(t); return err == nil && len(d.Partitions) == 3 }, c.Wait)
	d, err := r.describe(t)
	c.Must(err)
	r.Result["partitions"] = len(d.Partitions)
	r.Result["configs"] = r.Attempt(func() (any, error) { return r.describeConfigs(t, []string{"cleanup.policy", "max.message.bytes", "retention.ms"}) })
	r.Result["again"] = r.Attempt(func() (any, error) { return nil, r.create(t, 3, 1, nil) })
	r.Result["badConfig"] = r.Attempt(func() (any, error) {
		return nil, r.create(t+"-badcfg", 1, 1, map[string]*string{"cleanup.policy": str("bogus")})
	})
	r.Result["zeroPartitions"] = r.Attempt(func() (any, error) { return nil, r.create(t+"-zero", 0, 1, nil) })
	r.Result["replicationFactor3"] = r.Attempt(func() (any, error) { return nil, r.create(t+"-rf3", 1, 3, nil) })
	r.Result["listed"] = r.Mine(r.names())
}

func produceConsume(r *sr) {
	codecs := map[string]any{}
	for _, codec := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		t := r.Prefix + "-" + codec
		r.createReady(t, 1, map[string]*string{"max.message.bytes": str("4194304")})
		comp := map[string]sarama.CompressionCodec{"none": sarama.CompressionNone, "gzip": sarama.CompressionGZIP,
			"snappy": sarama.CompressionSnappy, "lz4": sarama.CompressionLZ4, "zstd": sarama.CompressionZSTD}[codec]
		p := r.producer(func(cfg *sarama.Config) { cfg.Producer.Compression = comp })
		msgs := []*sarama.ProducerMessage{}
		for _, s := range c.Standard() {
			msgs = append(msgs, &sarama.ProducerMessage{Topic: t, Partition: 0, Key: bytesOrNil(s.Key), Value: bytesOrNil(s.Value), Headers: toSarama(s.Headers)})
		}
		acks := r.send(p, msgs)
		ms, err := r.readFrom(t, sarama.OffsetOldest, 5, sarama.ReadUncommitted)
		c.Must(err)
		read := reprs(ms)
		codecs[codec] = map[string]any{"acks": acks, "records": read}
		r.Check(len(read) == 5, "%s: read back %d of 5 records", codec, len(read))
		for i, rec := range read {
			r.Check(c.SameJSON(rec, c.StandardRepr(i)), "%s: record %d read back differs from what was produced", codec, i)
		}
	}
	r.Result["codecs"] = codecs
}

func consumeOffsets(r *sr) {
	t := r.Prefix
	r.createReady(t, 1, nil)
	base := time.Now().Truncate(time.Second).Add(-time.Minute)
	p := r.producer(nil)
	msgs := values(t, 0, "m", 0, 10)
	for i, m := range msgs {
		m.Timestamp = base.Add(time.Duration(i) * time.Second)
	}
	r.send(p, msgs)
	ms, err := r.readFrom(t, sarama.OffsetOldest, 10, sarama.ReadUncommitted)
	c.Must(err)
	earliest := []any{}
	for _, m := range ms {
		earliest = append(earliest, map[string]any{"o": m.Offset, "v": c.Repr(m.Value), "ts": m.Timestamp.Sub(base).Milliseconds()})
	}
	r.Result["earliest"] = earliest
	baseMs := base.UnixMilli()
	r.Result["listOffsets"] = map[string]any{
		"earliest":  r.offsetAt(t, sarama.OffsetOldest),
		"latest":    r.offsetAt(t, sarama.OffsetNewest),
		"ts+4500":   r.offsetAt(t, baseMs+4500),
		"ts+100000": r.offsetAt(t, baseMs+100000),
	}
	at, err := r.cl().GetOffset(t, 0, baseMs+4500)
	c.Must(err)
	ms, err = r.readFrom(t, at, 5, sarama.ReadUncommitted)
	c.Must(err)
	r.Result["fromTimestamp"] = offsetsOf(ms)
	cons, err := sarama.NewConsumer(r.addrs, r.config())
	c.Must(err)
	defer cons.Close()
	// ConsumePartition resolves OffsetNewest before it returns.
	pc, err := cons.ConsumePartition(t, 0, sarama.OffsetNewest)
	c.Must(err)
	defer pc.Close()
	more := values(t, 0, "m", 10, 12)
	for i, m := range more {
		m.Timestamp = base.Add(time.Duration(10+i) * time.Second)
	}
	r.send(p, more)
	r.Result["fromLatest"] = offsetsOf(drain(pc, 2))
	r.Check(len(earliest) == 10, "earliest read %d of 10", len(earliest))
}

func groupResume(r *sr) {
	t, g := r.Prefix, r.Prefix+"-g"
	r.createReady(t, 1, nil)
	r.produceValues(t, "v", 0, 10)
	var mu sync.Mutex
	first := []int64{}
	committed := make(chan error, 1)
	ha := &handler{onMsg: func(sess sarama.ConsumerGroupSession, m *sarama.ConsumerMessage) {
		mu.Lock()
		defer mu.Unlock()
		if len(first) < 4 {
			first = append(first, m.Offset)
			if len(first) == 4 {
				sess.MarkOffset(t, 0, 4, "")
				sess.Commit()
				committed <- nil
			}
		}
	}}
	stopA := r.member(g, t, ha)
	select {
	case <-committed:
	case <-time.After(c.Wait):
	}
	stopA()
	mu.Lock()
	r.Result["firstRead"] = append([]int64{}, first...)
	mu.Unlock()
	r.Result["committedAfterFirst"] = r.committed(g, t)
	second := []int64{}
	done := make(chan struct{}, 1)
	hb := &handler{onMsg: func(sess sarama.ConsumerGroupSession, m *sarama.ConsumerMessage) {
		mu.Lock()
		defer mu.Unlock()
		if len(second) < 6 {
			second = append(second, m.Offset)
			sess.MarkMessage(m, "")
			if len(second) == 6 {
				sess.Commit()
				done <- struct{}{}
			}
		}
	}}
	stopB := r.member(g, t, hb)
	select {
	case <-done:
	case <-time.After(c.Wait):
	}
	stopB()
	mu.Lock()
	r.Result["secondRead"] = append([]int64{}, second...)
	mu.Unlock()
	r.Result["committedFinal"] = r.committed(g, t)
}

func groupSplit(r *sr) {
	t, g := r.Prefix, r.Prefix+"-g"
	r.createReady(t, 4, nil)
	var mu sync.Mutex
	seen := []map[int32]bool{{}, {}}
	hs := []*handler{}
	stops := []func(){}
	for i := 0; i < 2; i++ {
		i := i
		h := &handler{onMsg: func(_ sarama.ConsumerGroupSession, m *sarama.ConsumerMessage) {
			mu.Lock()
			seen[i][m.Partition] = true
			mu.Unlock()
		}}
		hs = append(hs, h)
		stops = append(stops, r.member(g, t, h))
	}
	balanced := func() bool {
		x, y := hs[0].snapshot(), hs[1].snapshot()
		u := map[int32]bool{}
		for _, p := range append(append([]int32{}, x...), y...) {
			u[p] = true
		}
		return len(x) > 0 && len(y) > 0 && len(u) == 4 && len(x)+len(y) == 4
	}
	stable := c.WaitFor(balanced, c.Wait)
	if stable {
		msgs := []*sarama.ProducerMessage{}
		for p := int32(0); p < 4; p++ {
			msgs = append(msgs, values(t, p, "p", int(p), int(p)+1)...)
		}
		r.send(r.producer(nil), msgs)
		c.WaitFor(func() bool { mu.Lock(); defer mu.Unlock(); return len(seen[0])+len(seen[1]) >= 4 }, c.Wait)
	}
	final := [][]int32{hs[0].snapshot(), hs[1].snapshot()}
	for _, s := range stops {
		s()
	}
	assignment := [][]int32{final[0], final[1]}
	sort.Slice(assignment, func(a, b int) bool {
		if len(assignment[a]) == 0 || len(assignment[b]) == 0 {
			return len(assignment[a]) < len(assignment[b])
		}
		return assignment[a][0] < assignment[b][0]
	})
	sizes := []int{len(final[0]), len(final[1])}
	sort.Ints(sizes)
	consumed := []int32{}
	owned := true
	mu.Lock()
	for i := range seen {
		for p := range seen[i] {
			consumed = append(consumed, p)
			mine := false
			for _, q := range final[i] {
				mine = mine || q == p
			}
			owned = owned && mine
		}
	}
	mu.Unlock()
	sort.Slice(consumed, func(a, b int) bool { return consumed[a] < consumed[b] })
	r.Result["balanced"] = stable
	r.Result["assignment"] = assignment // sarama's default balance strategy is range
	r.Result["sizes"] = sizes
	r.Result["consumedPartitions"] = consumed
	r.Result["consumedByOwner"] = owned
	r.Check(stable, "the two members never split the 4 partitions between them")
}

func idempotent(r *sr) {
	t := r.Prefix
	r.createReady(t, 1, nil)
	p := r.producer(func(cfg *sarama.Config) {
		cfg.Producer.Idempotent = true
		cfg.Net.MaxOpenRequests = 1
	})
	acks := []any{}
	for batch := 0; batch < 4; batch++ {
		acks = append(acks, r.send(p, values(t, 0, "i", batch*5, batch*5+5))...)
	}
	r.Result["acks"] = acks
	ms, err := r.readFrom(t, sarama.OffsetOldest, 20, sarama.ReadUncommitted)
	c.Must(err)
	vals := []any{}
	for _, m := range ms {
		vals = append(vals, c.Repr(m.Value))
	}
	r.Result["offsets"] = offsetsOf(ms)
	r.Result["values"] = vals
	r.Check(len(ms) == 20, "read back %d of 20", len(ms))
}

func deleteTopic(r *sr) {
	t := r.Prefix
	r.createReady(t, 2, nil)
	r.produceValues(t, "d", 0, 1)
	r.Result["listedBefore"] = r.Mine(r.names())
	r.Result["delete"] = r.Attempt(func() (any, error) { return nil, r.admin().DeleteTopic(t) })
	r.Result["goneFromList"] = c.WaitFor(func() bool {
		for _, n := range r.names() {
			if n == t {
				return false
			}
		}
		return true
	}, c.Wait)
	r.Result["describeAfter"] = r.Attempt(func() (any, error) { _, err := r.describe(t); return nil, err })
	r.Result["deleteAgain"] = r.Attempt(func() (any, error) { return nil, r.admin().DeleteTopic(t) })
	r.Result["recreate"] = r.Attempt(func() (any, error) {
		deadline := time.Now().Add(c.Wait)
		for {
			err := r.create(t, 1, 1, nil)
			if err == nil || time.Now().After(deadline) || !(errors.Is(err, sarama.ErrTopicAlreadyExists) || errors.Is(err, sarama.ErrUnknownTopicOrPartition)) {
				return nil, err
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
	c.WaitFor(func() bool { d, err := r.describe(t); return err == nil && len(d.Partitions) == 1 }, c.Wait)
	r.Result["recreatedLatest"] = r.offsetAt(t, sarama.OffsetNewest)
}

func configs(r *sr) {
	t := r.Prefix
	r.createReady(t, 1, map[string]*string{"retention.ms": str("86400000")})
	keys := []string{"cleanup.policy", "max.message.bytes", "retention.ms", "segment.bytes"}
	desc := func(topic string) func() (any, error) { return func() (any, error) { return r.describeConfigs(topic, keys) } }
	alter := func(entries map[string]sarama.IncrementalAlterConfigsEntry) func() (any, error) {
		return func() (any, error) { return nil, r.admin().IncrementalAlterConfig(sarama.TopicResource, t, entries, false) }
	}
	set := sarama.IncrementalAlterConfigsOperationSet
	r.Result["initial"] = r.Attempt(desc(t))
	r.Result["alter"] = r.Attempt(alter(map[string]sarama.IncrementalAlterConfigsEntry{
		"retention.ms": {Operation: set, Value: str("3600000")}, "cleanup.policy": {Operation: set, Value: str("compact")}}))
	// A change is applied through the broker's metadata log; a describe right after may still see the
	// old value (on Kafka too): wait, bounded, until it shows, then report what is seen.
	settle := func(want string) {
		c.WaitFor(func() bool {
			entries, err := r.admin().DescribeConfig(sarama.ConfigResource{Type: sarama.TopicResource, Name: t, ConfigNames: []string{"retention.ms"}})
			return err == nil && len(entries) == 1 && entries[0].Value == want
		}, c.Wait)
	}
	settle("3600000")
	r.Result["afterAlter"] = r.Attempt(desc(t))
	r.Result["reset"] = r.Attempt(alter(map[string]sarama.IncrementalAlterConfigsEntry{
		"retention.ms": {Operation: sarama.IncrementalAlterConfigsOperationDelete}}))
	settle("604800000")
	r.Result["afterReset"] = r.Attempt(desc(t))
	r.Result["invalidValue"] = r.Attempt(alter(map[string]sarama.IncrementalAlterConfigsEntry{"retention.ms": {Operation: set, Value: str("abc")}}))
	r.Result["unknownKey"] = r.Attempt(alter(map[string]sarama.IncrementalAlterConfigsEntry{"no.such.config": {Operation: set, Value: str("1")}}))
	r.Result["missingTopic"] = r.Attempt(desc(t + "-missing"))
}

func deleteRecords(r *sr) {
	t := r.Prefix
	r.createReady(t, 1, nil)
	r.produceValues(t, "r", 0, 10)
	del := func(before int64) func() (any, error) {
		return func() (any, error) { return nil, r.admin().DeleteRecords(t, map[int32]int64{0: before}) }
	}
	r.Result["deleteBefore4"] = r.Attempt(del(4))
	r.Result["earliest"] = r.offsetAt(t, sarama.OffsetOldest)
	r.Result["latest"] = r.offsetAt(t, sarama.OffsetNewest)
	ms, err := r.readFrom(t, sarama.OffsetOldest, 6, sarama.ReadUncommitted)
	c.Must(err)
	r.Result["readFromEarliest"] = offsetsOf(ms)
	r.Result["deleteBeyondEnd"] = r.Attempt(del(20))
	r.Result["deleteAll"] = r.Attempt(del(-1))
	r.Result["earliestAfterAll"] = r.offsetAt(t, sarama.OffsetOldest)
}

func groupsAdmin(r *sr) {
	t, g, busy := r.Prefix, r.Prefix+"-g", r.Prefix+"-busy"
	r.createReady(t, 1, nil)
	r.produceValues(t, "g", 0, 3)
	var mu sync.Mutex
	n := 0
	done := make(chan struct{}, 1)
	h := &handler{onMsg: func(sess sarama.ConsumerGroupSession, m *sarama.ConsumerMessage) {
		mu.Lock()
		defer mu.Unlock()
		sess.MarkMessage(m, "")
		n++
		if n == 3 {
			sess.Commit()
			done <- struct{}{}
		}
	}}
	stop := r.member(g, t, h)
	select {
	case <-done:
	case <-time.After(c.Wait):
	}
	stop()
	myGroups := func() []any {
		all, err := r.admin().ListConsumerGroups()
		c.Must(err)
		names := []string{}
		for name := range all {
			names = append(names, name)
		}
		out := []any{}
		for _, name := range r.Mine(names) {
			out = append(out, map[string]any{"group": name, "protocolType": all[name]})
		}
		return out
	}
	describe := func() (any, error) {
		ds, err := r.admin().DescribeConsumerGroups([]string{g})
		if err != nil {
			return nil, err
		}
		d := ds[0]
		if !errors.Is(d.Err, sarama.ErrNoError) {
			return nil, d.Err
		}
		return map[string]any{"state": d.State, "members": len(d.Members), "protocolType": d.ProtocolType, "assignor": d.Protocol}, nil
	}
	r.Result["listed"] = myGroups()
	r.Result["described"] = r.Attempt(describe)
	r.Result["offsets"] = r.committed(g, t)
	hb := &handler{onMsg: func(sarama.ConsumerGroupSession, *sarama.ConsumerMessage) {}}
	stopBusy := r.member(busy, t, hb)
	c.WaitFor(func() bool { return len(hb.snapshot()) > 0 }, c.Wait)
	r.Result["deleteActive"] = r.Attempt(func() (any, error) { return nil, r.admin().DeleteConsumerGroup(busy) })
	stopBusy()
	r.Result["delete"] = r.Attempt(func() (any, error) { return nil, r.admin().DeleteConsumerGroup(g) })
	r.Result["listedAfterDelete"] = myGroups()
	r.Result["describedAfterDelete"] = r.Attempt(describe)
	r.Result["deleteAgain"] = r.Attempt(func() (any, error) { return nil, r.admin().DeleteConsumerGroup(g) })
}

func errMissingTopic(r *sr) {
	t := r.Prefix + "-missing"
	p := r.producer(nil)
	r.Result["produce"] = r.send(p, []*sarama.ProducerMessage{{Topic: t, Partition: 0, Value: sarama.StringEncoder("x")}})[0]
	r.Result["describe"] = r.Attempt(func() (any, error) { _, err := r.describe(t); return nil, err })
	created := false
	for _, n := range r.names() {
		created = created || n == t
	}
	r.Result["createdByProduce"] = created
}

func errOffsetOutOfRange(r *sr) {
	t := r.Prefix
	r.createReady(t, 1, nil)
	r.produceValues(t, "o", 0, 5)
	// sarama's partition consumer checks the offset against the partition's range before fetching and
	// has no reset policy of its own.
	r.Result["resetNone"] = r.Attempt(func() (any, error) {
		ms, err := r.readFrom(t, 100, 1, sarama.ReadUncommitted)
		if err != nil {
			return nil, err
		}
		return len(ms), nil
	})
	r.Result["atEnd"] = r.Attempt(func() (any, error) {
		ms, err := r.readFrom(t, 5, 0, sarama.ReadUncommitted)
		return len(ms), err
	})
}

func errOversize(r *sr) {
	t := r.Prefix
	r.createReady(t, 1, map[string]*string{"max.message.bytes": str("1024")})
	p := r.producer(nil)
	r.Result["oversize"] = r.send(p, []*sarama.ProducerMessage{{Topic: t, Partition: 0, Value: sarama.ByteEncoder(c.Pattern(4000))}})[0]
	r.Result["small"] = r.send(p, []*sarama.ProducerMessage{{Topic: t, Partition: 0, Value: sarama.StringEncoder("ok")}})[0]
	ms, err := r.readFrom(t, sarama.OffsetOldest, 1, sarama.ReadUncommitted)
	c.Must(err)
	r.Result["read"] = reprs(ms)
}

func transactions(r *sr) {
	t := r.Prefix
	r.createReady(t, 1, nil)
	p := r.producer(func(cfg *sarama.Config) {
		cfg.Producer.Idempotent = true
		cfg.Net.MaxOpenRequests = 1
		cfg.Producer.Transaction.ID = r.Prefix + "-tx"
	})
	txn := func(vals []string, commit bool) {
		c.Must(p.BeginTxn())
		msgs := []*sarama.ProducerMessage{}
		for _, v := range vals {
			msgs = append(msgs, &sarama.ProducerMessage{Topic: t, Partition: 0, Value: sarama.StringEncoder(v)})
		}
		for _, o := range r.send(p, msgs) {
			if m, ok := o.(map[string]any); ok {
				c.Must(fmt.Errorf("transactional produce failed: %v", m["error"]))
			}
		}
		if commit {
			c.Must(p.CommitTxn())
		} else {
			c.Must(p.AbortTxn())
		}
	}
	txn([]string{"t0", "t1", "t2"}, true)
	txn([]string{"a0", "a1"}, false)
	txn([]string{"t3"}, true)
	join := func(ms []*sarama.ConsumerMessage) []string {
		out := []string{}
		for _, m := range ms {
			out = append(out, fmt.Sprintf("%d:%s", m.Offset, m.Value))
		}
		return out
	}
	committed, err := r.readFrom(t, sarama.OffsetOldest, 4, sarama.ReadCommitted)
	c.Must(err)
	uncommitted, err := r.readFrom(t, sarama.OffsetOldest, 6, sarama.ReadUncommitted)
	c.Must(err)
	r.Result["readCommitted"] = join(committed)
	r.Result["readUncommitted"] = join(uncommitted)
	r.Result["latest"] = r.offsetAt(t, sarama.OffsetNewest)
}

func main() {
	wrap := func(f func(r *sr)) func(*c.Run, string) {
		return func(run *c.Run, bootstrap string) { f(&sr{Run: run, addrs: strings.Split(bootstrap, ",")}) }
	}
	c.Main(map[string]func(*c.Run, string){
		"metadata":                wrap(metadata),
		"create-topic":            wrap(createTopic),
		"produce-consume":         wrap(produceConsume),
		"consume-offsets":         wrap(consumeOffsets),
		"group-resume":            wrap(groupResume),
		"group-split":             wrap(groupSplit),
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
