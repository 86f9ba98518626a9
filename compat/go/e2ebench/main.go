// e2ebench: what the Go library's end-to-end encryption (ledgerline.dev/compat/e2e) costs franz-go,
// through a running broker. The Go counterpart of bench/e2e.ts, with the same records and output.
//
//	producer  1 KiB records (key "key-<i mod 1000>", one header "trace"="t<i>") produced with acks=all, the
//	          client's default batching and linger, no compression, every record produced asynchronously
//	          then Flush: through e2e.Client (encrypting for one recipient, default rotation) to a topic
//	          with ledgerline.encryption.required=true, against a plain *kgo.Client to an ordinary topic.
//	consumer  the same topics read back from the start by a direct consumer (ConsumePartitions, no group),
//	          PollFetches until every record arrived: e2e.Client decrypting (every record must come out
//	          decrypted) against a plain *kgo.Client. Timed from the first records delivered to the last.
//	broker    records encrypted once, outside the clock, produced by a plain *kgo.Client to a required
//	          topic and to an ordinary one: the broker's envelope check and the larger records, with no
//	          client-side crypto in it.
//	local     ns per EncryptRecord and DecryptRecord of one 1 KiB record in a tight loop (no broker).
//
// Every topic has 4 partitions. Each broker measure alternates the two sides in pairs (encrypted first in
// odd pairs, plaintext first in even ones) and prints the medians, the median ratio and each pair's ratio,
// since the machine is shared and noisy, with the client process's CPU time per record in the same window
// (user + system, GC included), which tells client-bound from broker-bound.
//
//	e2ebench --bootstrap HOST:PORT --keys DIR --recipient ID [--records 300000] [--pairs 3] [--topic-prefix P] [--cpuprofile FILE]
package main

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"ledgerline.dev/compat/e2e"
)

const (
	partitions  = 4
	recordBytes = 1024
	timeout     = 5 * time.Minute
)

// cpu is this process's CPU time so far (user + system, every goroutine and the GC).
func cpu() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// run is one measure's outcome: records/s, and the client's CPU per record in the same window (us).
type run struct {
	rate, cpuUs float64
}

func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }

func fail(format string, args ...any) {
	logf("e2ebench: "+format, args...)
	os.Exit(1)
}

// source is the plaintext of every record, made once; each produce run gets fresh *kgo.Record structs
// around these bytes (encryption replaces a record's slices, it does not write into them).
type source struct {
	keys, values, traces [][]byte
}

func makeSource(n int) source {
	s := source{keys: make([][]byte, n), values: make([][]byte, n), traces: make([][]byte, n)}
	for i := range n {
		v := make([]byte, recordBytes)
		for j := range v {
			v[j] = byte('a' + i%26)
		}
		copy(v, fmt.Sprintf("record %d ", i))
		s.values[i] = v
		s.keys[i] = []byte("key-" + strconv.Itoa(i%1000))
		s.traces[i] = []byte("t" + strconv.Itoa(i))
	}
	return s
}

func (s source) records(topic string) []*kgo.Record {
	out := make([]*kgo.Record, len(s.values))
	for i := range out {
		out[i] = &kgo.Record{Topic: topic, Key: s.keys[i], Value: s.values[i], Headers: []kgo.RecordHeader{{Key: "trace", Value: s.traces[i]}}}
	}
	return out
}

// producer is what both *kgo.Client and *e2e.Client offer (e2e.Client's Produce encrypts first).
type producer interface {
	Produce(ctx context.Context, r *kgo.Record, promise func(*kgo.Record, error))
	Flush(ctx context.Context) error
}

func newClient(bootstrap string, opts ...kgo.Opt) *kgo.Client {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(bootstrap)}, opts...)...)
	if err != nil {
		fail("%v", err)
	}
	// The connection is up before the clock starts (both sides alike).
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.Ping(ctx); err != nil {
		fail("cannot reach %s: %v", bootstrap, err)
	}
	return cl
}

// produce sends every record asynchronously, then flushes; records/s from the first Produce to the end of
// Flush. Every record must be acknowledged without error.
func produce(p producer, recs []*kgo.Record) (run, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var (
		failed   atomic.Int64
		mu       sync.Mutex
		firstErr error
	)
	promise := func(_ *kgo.Record, err error) {
		if err != nil {
			if failed.Add(1) == 1 {
				mu.Lock()
				firstErr = err
				mu.Unlock()
			}
		}
	}
	t0, c0 := time.Now(), cpu()
	for _, r := range recs {
		p.Produce(ctx, r, promise)
	}
	if err := p.Flush(ctx); err != nil {
		return run{}, err
	}
	elapsed, used := time.Since(t0), cpu()-c0
	if n := failed.Load(); n > 0 {
		mu.Lock()
		defer mu.Unlock()
		return run{}, fmt.Errorf("%d of %d records failed, the first with: %w", n, len(recs), firstErr)
	}
	return run{float64(len(recs)) / elapsed.Seconds(), float64(used.Microseconds()) / float64(len(recs))}, nil
}

// poller is what both *kgo.Client and *e2e.Client offer (e2e.Client's PollFetches decrypts).
type poller interface {
	PollFetches(ctx context.Context) kgo.Fetches
}

// consume polls until expected records arrived. The clock starts when the first records are delivered
// (the first poll that has any) and stops when the last are: the rate is the records delivered after the
// first poll over that time, so neither connecting, listing the start offsets and the first fetch's wait,
// nor the first poll's records (fetched before the clock started) count. With decrypted set, every record
// must come out decrypted (e2e.StatusOf); with it unset, as plaintext. Every value must be 1 KiB.
func consume(p poller, expected int, decrypted bool) (res run, first int, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	want := e2e.StatusPlaintext
	if decrypted {
		want = e2e.StatusDecrypted
	}
	var t0, t1 time.Time
	var c0, c1 time.Duration
	seen := 0
	for seen < expected {
		fs := p.PollFetches(ctx)
		if errs := fs.Errors(); len(errs) > 0 {
			e := errs[0]
			return run{}, 0, fmt.Errorf("after %d of %d records: %s-%d: %w", seen, expected, e.Topic, e.Partition, e.Err)
		}
		n := 0
		var bad error
		fs.EachRecord(func(r *kgo.Record) {
			n++
			if bad == nil {
				if s := e2e.StatusOf(r); s != want {
					bad = fmt.Errorf("%s-%d@%d is %s, not %s", r.Topic, r.Partition, r.Offset, s, want)
				} else if len(r.Value) != recordBytes {
					bad = fmt.Errorf("%s-%d@%d has a value of %d bytes, not %d", r.Topic, r.Partition, r.Offset, len(r.Value), recordBytes)
				}
			}
		})
		if bad != nil {
			return run{}, 0, bad
		}
		if n == 0 {
			continue
		}
		t1, c1 = time.Now(), cpu()
		if seen == 0 {
			t0, c0, first = t1, c1, n
		}
		seen += n
	}
	if seen != expected {
		return run{}, 0, fmt.Errorf("read %d records, expected %d", seen, expected)
	}
	if seen == first {
		return run{}, 0, fmt.Errorf("all %d records arrived in the first poll: nothing to time (--records must exceed one fetch, about 4 MiB: use 20000 or more)", seen)
	}
	timed := float64(seen - first)
	return run{timed / t1.Sub(t0).Seconds(), float64((c1 - c0).Microseconds()) / timed}, first, nil
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func ratioLine(label, unit string, with, without []float64, digits int) string {
	pairs := make([]float64, len(with))
	strs := make([]string, len(with))
	for i := range with {
		pairs[i] = with[i] / without[i]
		strs[i] = fmt.Sprintf("%.2f", pairs[i])
	}
	return fmt.Sprintf("%-44s %9.*f %9.*f %-10s %5.2f  (pairs %s)", label, digits, median(with), digits, median(without), unit, median(pairs), strings.Join(strs, ", "))
}

// micro runs f in testing.Benchmark rounds times; the median ns/op, allocs/op and B/op of the rounds.
func micro(rounds int, f func(b *testing.B)) (ns float64, allocs, bytes int64, all []float64) {
	var res []testing.BenchmarkResult
	for range rounds {
		r := testing.Benchmark(func(b *testing.B) { b.ReportAllocs(); f(b) })
		res = append(res, r)
		all = append(all, float64(r.T.Nanoseconds())/float64(r.N))
	}
	m := res[len(res)/2]
	return median(all), m.AllocsPerOp(), m.AllocedBytesPerOp(), all
}

func microLine(label string, ns float64, allocs, bytes int64, all []float64) string {
	strs := make([]string, len(all))
	for i, x := range all {
		strs[i] = fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%-44s %9.0f ns/op %4d allocs/op %6d B/op  (rounds %s)", label, ns, allocs, bytes, strings.Join(strs, ", "))
}

// local measures the library alone: EncryptRecord and DecryptRecord of one 1 KiB record, and for
// comparison what AES-256-GCM itself takes for the value.
func local(keys e2e.KeyReader, recipient string) []string {
	const rounds = 3
	ctx := context.Background()
	src := makeSource(1)
	enc, err := e2e.NewEncryptor(e2e.EncryptorConfig{Keys: keys, Recipients: []string{recipient}})
	if err != nil {
		fail("%v", err)
	}
	dec, err := e2e.NewDecryptor(e2e.DecryptorConfig{Keys: keys})
	if err != nil {
		fail("%v", err)
	}
	plain := src.records("local")[0]
	sealed := *plain
	if err := enc.EncryptRecord(ctx, &sealed); err != nil {
		fail("EncryptRecord: %v", err)
	}
	warm := sealed // unwraps the data key into the decryptor's cache
	if ok, err := dec.DecryptRecord(ctx, &warm); err != nil || !ok || e2e.StatusOf(&warm) != e2e.StatusDecrypted {
		fail("DecryptRecord: %v", err)
	}
	var lines []string
	ns, a, b, all := micro(rounds, func(bb *testing.B) {
		for bb.Loop() {
			r := *plain
			if err := enc.EncryptRecord(ctx, &r); err != nil {
				bb.Fatal(err)
			}
		}
	})
	lines = append(lines, microLine("EncryptRecord (1 KiB, one X25519 recipient)", ns, a, b, all))
	ns, a, b, all = micro(rounds, func(bb *testing.B) {
		for bb.Loop() {
			r := sealed
			if ok, err := dec.DecryptRecord(ctx, &r); err != nil || !ok {
				bb.Fatal(err)
			}
		}
	})
	lines = append(lines, microLine("DecryptRecord (1 KiB, data key cached)", ns, a, b, all))
	key := make([]byte, 32)
	nonce := make([]byte, 12)
	rand.Read(key)
	rand.Read(nonce)
	aad := make([]byte, 200) // about a record's: label, section, topic, key, head with one X25519 wrap
	ns, a, b, all = micro(rounds, func(bb *testing.B) {
		blk, _ := aes.NewCipher(key)
		g, _ := cipher.NewGCM(blk)
		out := make([]byte, 0, recordBytes+16)
		for bb.Loop() {
			out = g.Seal(out[:0], nonce, plain.Value, aad)
		}
	})
	lines = append(lines, microLine("  of it: AES-256-GCM seal of 1 KiB alone", ns, a, b, all))
	ns, a, b, all = micro(rounds, func(bb *testing.B) {
		for bb.Loop() {
			blk, _ := aes.NewCipher(key)
			if _, err := cipher.NewGCM(blk); err != nil {
				bb.Fatal(err)
			}
		}
	})
	lines = append(lines, microLine("  of it: aes.NewCipher + cipher.NewGCM", ns, a, b, all))
	return lines
}

func main() {
	bootstrap := flag.String("bootstrap", "", "HOST:PORT of a running broker")
	keysDir := flag.String("keys", "", "key directory (ledgerline keys generate ID --dir DIR)")
	recipient := flag.String("recipient", "", "recipient key id or name (X25519 for figures comparable to bench/e2e.ts)")
	count := flag.Int("records", 300_000, "records per run (the plaintext consumer reads 100,000 in about 0.15 s: too short a window to time)")
	pairs := flag.Int("pairs", 3, "alternating pairs")
	prefix := flag.String("topic-prefix", fmt.Sprintf("e2ebench-%d", time.Now().Unix()), "topic name prefix")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run (go tool pprof) to this file")
	flag.Parse()
	if *bootstrap == "" || *keysDir == "" || *recipient == "" || *count < 1 || *pairs < 1 || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: e2ebench --bootstrap HOST:PORT --keys DIR --recipient ID [--records 300000] [--pairs 3] [--topic-prefix P] [--cpuprofile FILE]")
		os.Exit(64)
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fail("%v", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fail("%v", err)
		}
		defer pprof.StopCPUProfile()
	}
	keys := e2e.NewPemDirectory(*keysDir)
	if pub, err := keys.PublicKey(context.Background(), *recipient); err != nil || pub == nil {
		fail("no public key for recipient %s in %s (%v)", *recipient, *keysDir, err)
	}

	// Topics, 4 partitions each: enc-<i> and pre-req-<i> require encryption, plain-<i> and pre-ord-<i> do not.
	topic := func(kind string, i int) string { return fmt.Sprintf("%s-%s-%d", *prefix, kind, i) }
	var requiredTopics, ordinaryTopics []string
	for i := range *pairs {
		requiredTopics = append(requiredTopics, topic("enc", i), topic("pre-req", i))
		ordinaryTopics = append(ordinaryTopics, topic("plain", i), topic("pre-ord", i))
	}
	admin := newClient(*bootstrap)
	adm := kadm.NewClient(admin)
	required := "true"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	for _, create := range []struct {
		topics  []string
		configs map[string]*string
	}{{requiredTopics, map[string]*string{"ledgerline.encryption.required": &required}}, {ordinaryTopics, nil}} {
		res, err := adm.CreateTopics(ctx, partitions, 1, create.configs, create.topics...)
		if err == nil {
			err = res.Error()
		}
		if err != nil {
			fail("creating topics: %v", err)
		}
	}
	cancel()
	admin.Close()

	src := makeSource(*count)
	// The broker's side: records encrypted once, before any clock, produced by a plain client to a
	// required topic and to an ordinary one (the records name topic "pre" in their AAD: the broker checks
	// the envelope's form only).
	preEnc, err := e2e.NewEncryptor(e2e.EncryptorConfig{Keys: keys, Recipients: []string{*recipient}})
	if err != nil {
		fail("%v", err)
	}
	presealed := src.records("pre")
	for _, r := range presealed {
		if err := preEnc.EncryptRecord(context.Background(), r); err != nil {
			fail("%v", err)
		}
	}
	presealedFor := func(t string) []*kgo.Record {
		out := make([]*kgo.Record, len(presealed))
		for i, r := range presealed {
			c := *r
			c.Topic = t
			out[i] = &c
		}
		return out
	}

	producerOpts := []kgo.Opt{kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerBatchCompression(kgo.NoCompression())}
	var encProduce, plainProduce, encConsume, plainConsume, reqBroker, ordBroker []run
	for i := range *pairs {
		order := []bool{true, false} // with encryption first in odd pairs (1, 3, ...)
		if i%2 == 1 {
			order = []bool{false, true}
		}
		logf("pair %d of %d (%s first)", i+1, *pairs, map[bool]string{true: "encrypted", false: "plaintext"}[order[0]])
		for _, withEnc := range order {
			cl := newClient(*bootstrap, producerOpts...)
			var r run
			if withEnc {
				enc, err := e2e.NewEncryptor(e2e.EncryptorConfig{Keys: keys, Recipients: []string{*recipient}})
				if err != nil {
					fail("%v", err)
				}
				recs := src.records(topic("enc", i))
				r, err = produce(e2e.NewClient(cl, e2e.ClientConfig{Encryptor: enc}), recs)
				if err != nil {
					fail("produce (encrypted): %v", err)
				}
				encProduce = append(encProduce, r)
			} else {
				recs := src.records(topic("plain", i))
				if r, err = produce(cl, recs); err != nil {
					fail("produce (plaintext): %v", err)
				}
				plainProduce = append(plainProduce, r)
			}
			cl.Close()
			logf("  produce %-9s %8.0f records/s, client CPU %5.1f us/record", map[bool]string{true: "encrypted", false: "plaintext"}[withEnc], r.rate, r.cpuUs)
		}
		for _, withEnc := range order {
			t := topic("plain", i)
			if withEnc {
				t = topic("enc", i)
			}
			offsets := map[int32]kgo.Offset{}
			for p := range int32(partitions) {
				offsets[p] = kgo.NewOffset().AtStart()
			}
			cl := newClient(*bootstrap, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{t: offsets}))
			var (
				r     run
				first int
			)
			if withEnc {
				dec, err := e2e.NewDecryptor(e2e.DecryptorConfig{Keys: keys})
				if err != nil {
					fail("%v", err)
				}
				if r, first, err = consume(e2e.NewClient(cl, e2e.ClientConfig{Decryptor: dec}), *count, true); err != nil {
					fail("consume (encrypted): %v", err)
				}
				encConsume = append(encConsume, r)
			} else {
				if r, first, err = consume(cl, *count, false); err != nil {
					fail("consume (plaintext): %v", err)
				}
				plainConsume = append(plainConsume, r)
			}
			cl.Close()
			logf("  consume %-9s %8.0f records/s, client CPU %5.1f us/record (first poll: %d records, untimed)", map[bool]string{true: "encrypted", false: "plaintext"}[withEnc], r.rate, r.cpuUs, first)
		}
		for _, req := range order {
			cl := newClient(*bootstrap, producerOpts...)
			t := topic("pre-ord", i)
			if req {
				t = topic("pre-req", i)
			}
			r, err := produce(cl, presealedFor(t))
			cl.Close()
			if err != nil {
				fail("produce (pre-encrypted to %s): %v", t, err)
			}
			if req {
				reqBroker = append(reqBroker, r)
			} else {
				ordBroker = append(ordBroker, r)
			}
			logf("  produce pre-encrypted to %-8s %8.0f records/s", map[bool]string{true: "required", false: "ordinary"}[req], r.rate)
		}
	}
	logf("local: EncryptRecord / DecryptRecord in a tight loop")
	localLines := local(keys, *recipient)

	rates := func(rs []run) []float64 {
		out := make([]float64, len(rs))
		for i, r := range rs {
			out[i] = r.rate
		}
		return out
	}
	cpus := func(rs []run) []float64 {
		out := make([]float64, len(rs))
		for i, r := range rs {
			out[i] = r.cpuUs
		}
		return out
	}
	fmt.Printf("\nEnd-to-end encryption (Go, franz-go %s), %d records of %d B, %d partitions, acks=all, default batching, no compression, %d alternating pairs; GOMAXPROCS %d\n",
		franzVersion(), *count, recordBytes, partitions, *pairs, runtime.GOMAXPROCS(0))
	fmt.Printf("%-44s %9s %9s %-10s ratio\n", "", "with", "without", "")
	fmt.Println(ratioLine("franz-go: produce (encrypt + batch + send)", "records/s", rates(encProduce), rates(plainProduce), 0))
	fmt.Println(ratioLine("  client CPU (user + sys) per record", "us", cpus(encProduce), cpus(plainProduce), 1))
	fmt.Println(ratioLine("franz-go: consume (PollFetches + decrypt)", "records/s", rates(encConsume), rates(plainConsume), 0))
	fmt.Println(ratioLine("  client CPU (user + sys) per record", "us", cpus(encConsume), cpus(plainConsume), 1))
	fmt.Println(ratioLine("broker: pre-encrypted, required vs ordinary", "records/s", rates(reqBroker), rates(ordBroker), 0))
	fmt.Println()
	fmt.Println("Without a broker (one goroutine, testing.Benchmark, median of 3 rounds):")
	for _, l := range localLines {
		fmt.Println(l)
	}
}

// franzVersion is the franz-go module version built in, when the binary knows it.
func franzVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == "github.com/twmb/franz-go" {
				return m.Version
			}
		}
	}
	return "?"
}
