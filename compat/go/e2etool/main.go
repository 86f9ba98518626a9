// The e2e interop tool of the Go library (e2e-tool contract: `vectors`, `produce`, `consume`), run by the
// cross-language test against a real broker. stdout carries only the contract's JSON lines (or, for
// vectors, its ok/FAIL lines); logs go to stderr.
//
//	e2etool vectors DIR
//	e2etool produce --bootstrap HOST:PORT --topic T --keys DIR --recipients ID[,ID...] --count N --tag TAG
//	                [--pseudonym ID] [--seal-headers H[,H...]] [--rotate-records M] [--plaintext]
//	e2etool consume --bootstrap HOST:PORT --topic T --keys DIR --count N [--on-failure FAIL|DISCARD|CONSUME]
//	                [--timeout-ms 60000]
//
// Exit codes: 0 done; 1 a vector failed; 2 a produce error; 3 FAIL stopped at a record; 4 timeout;
// 64 bad arguments.
package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"ledgerline.dev/compat/e2e"
)

const usage = `usage:
  e2etool vectors DIR
  e2etool produce --bootstrap HOST:PORT --topic T --keys DIR --recipients ID[,ID...] --count N --tag TAG [--pseudonym ID] [--seal-headers H[,H...]] [--rotate-records M] [--plaintext]
  e2etool consume --bootstrap HOST:PORT --topic T --keys DIR --count N [--on-failure FAIL|DISCARD|CONSUME] [--timeout-ms 60000]`

func badArgs(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "e2etool: "+format+"\n%s\n", append(args, usage)...)
	os.Exit(64)
}

func main() {
	if len(os.Args) < 2 {
		badArgs("a command is needed")
	}
	switch os.Args[1] {
	case "vectors":
		if len(os.Args) != 3 {
			badArgs("vectors takes one directory")
		}
		os.Exit(vectors(os.Args[2]))
	case "produce":
		os.Exit(produce(os.Args[2:]))
	case "consume":
		os.Exit(consume(os.Args[2:]))
	}
	badArgs("unknown command %q", os.Args[1])
}

func vectors(dir string) int {
	results, err := e2e.CheckVectorDir(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2etool:", err)
		return 1
	}
	if len(results) == 0 {
		fmt.Fprintf(os.Stderr, "e2etool: no *.json vectors in %s\n", dir)
		return 1
	}
	code := 0
	for _, r := range results {
		if r.Err != nil {
			fmt.Printf("FAIL %s: %s\n", r.File, strings.ReplaceAll(r.Err.Error(), "\n", " "))
			code = 1
		} else {
			fmt.Printf("ok %s\n", r.File)
		}
	}
	return code
}

func printJSON(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2etool: cannot encode output:", err)
		os.Exit(1)
	}
	os.Stdout.Write(append(b, '\n'))
}

func list(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

func clientOpts(bootstrap string) []kgo.Opt {
	opts := []kgo.Opt{kgo.SeedBrokers(bootstrap)}
	if os.Getenv("E2ETOOL_DEBUG") != "" {
		opts = append(opts, kgo.WithLogger(kgo.BasicLogger(os.Stderr, kgo.LogLevelDebug, nil)))
	}
	return opts
}

func produce(args []string) int {
	fs := flag.NewFlagSet("produce", flag.ContinueOnError)
	bootstrap := fs.String("bootstrap", "", "HOST:PORT")
	topic := fs.String("topic", "", "topic")
	keysDir := fs.String("keys", "", "key directory")
	recipients := fs.String("recipients", "", "recipient key ids or names, comma-separated")
	count := fs.Int("count", -1, "records to produce")
	tag := fs.String("tag", "", "value tag")
	pseudonym := fs.String("pseudonym", "", "pseudonym secret id")
	sealHeaders := fs.String("seal-headers", "", "headers to seal, comma-separated")
	rotateRecords := fs.Int("rotate-records", 0, "records per data key (0: the library's default)")
	plaintext := fs.Bool("plaintext", false, "send without encryption")
	if err := fs.Parse(args); err != nil {
		badArgs("%v", err)
	}
	if *bootstrap == "" || *topic == "" || *count < 0 || (!*plaintext && (*keysDir == "" || len(list(*recipients)) == 0)) || fs.NArg() > 0 {
		badArgs("produce needs --bootstrap, --topic, --count and (unless --plaintext) --keys and --recipients")
	}
	if *rotateRecords < 0 {
		badArgs("--rotate-records must be positive")
	}
	cl, err := kgo.NewClient(append(clientOpts(*bootstrap), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordDeliveryTimeout(60*time.Second),
		// As the Java, TypeScript and Python producers do by default: the broker decides.
		kgo.AllowAutoTopicCreation(),
		// Ciphertext does not compress, and every client reads uncompressed batches (kafkajs reads no
		// snappy, franz-go's default, without a codec plugged in).
		kgo.ProducerBatchCompression(kgo.NoCompression()))...)
	if err != nil {
		printJSON(map[string]string{"error": err.Error()})
		return 2
	}
	defer cl.Close()
	var enc *e2e.Encryptor
	if !*plaintext {
		if enc, err = e2e.NewEncryptor(e2e.EncryptorConfig{
			Keys:               e2e.NewPemDirectory(*keysDir),
			Recipients:         list(*recipients),
			PseudonymKeyID:     *pseudonym,
			SealHeaders:        list(*sealHeaders),
			RotateAfterRecords: *rotateRecords,
		}); err != nil {
			badArgs("%v", err)
		}
	}
	client := e2e.NewClient(cl, e2e.ClientConfig{Encryptor: enc})
	ctx := context.Background()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	promise := func(_ *kgo.Record, err error) {
		if err != nil {
			mu.Lock()
			if firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
		}
		wg.Done()
	}
	for i := 0; i < *count; i++ {
		r := &kgo.Record{
			Topic: *topic,
			Key:   fmt.Appendf(nil, "k%d", i%7),
			Value: fmt.Appendf(nil, "%s:%d:%s", *tag, i, strings.Repeat("x", i%13)),
			Headers: []kgo.RecordHeader{
				{Key: "n", Value: fmt.Appendf(nil, "%d", i)},
				{Key: "h-secret", Value: fmt.Appendf(nil, "s%d", i)},
			},
		}
		wg.Add(1)
		if *plaintext {
			cl.Produce(ctx, r, promise)
		} else {
			client.Produce(ctx, r, promise)
		}
	}
	wg.Wait()
	if firstErr != nil {
		printJSON(map[string]string{"error": firstErr.Error()})
		return 2
	}
	printJSON(map[string]int{"produced": *count})
	return 0
}

func hexOrNull(b []byte) *string {
	if b == nil {
		return nil
	}
	s := hex.EncodeToString(b)
	return &s
}

// delivered is one record's line, fields in the contract's order.
type delivered struct {
	Partition int32       `json:"partition"`
	Offset    int64       `json:"offset"`
	Key       *string     `json:"key"`
	Value     *string     `json:"value"`
	Headers   [][]any     `json:"headers"`
	Status    string      `json:"status"`
	Reason    *e2e.Reason `json:"reason"`
}

func consume(args []string) int {
	fs := flag.NewFlagSet("consume", flag.ContinueOnError)
	bootstrap := fs.String("bootstrap", "", "HOST:PORT")
	topic := fs.String("topic", "", "topic")
	keysDir := fs.String("keys", "", "key directory")
	count := fs.Int("count", -1, "records to deliver")
	onFailure := fs.String("on-failure", "FAIL", "FAIL, DISCARD or CONSUME")
	timeoutMs := fs.Int("timeout-ms", 60000, "give up after this long")
	if err := fs.Parse(args); err != nil {
		badArgs("%v", err)
	}
	if *bootstrap == "" || *topic == "" || *keysDir == "" || *count < 0 || fs.NArg() > 0 {
		badArgs("consume needs --bootstrap, --topic, --keys and --count")
	}
	action, err := e2e.ParseFailureAction(*onFailure)
	if err != nil {
		badArgs("%v", err)
	}
	dec, err := e2e.NewDecryptor(e2e.DecryptorConfig{Keys: e2e.NewPemDirectory(*keysDir), OnFailure: action})
	if err != nil {
		badArgs("%v", err)
	}
	// Every partition from the earliest offset, no group.
	cl, err := kgo.NewClient(append(clientOpts(*bootstrap), kgo.ConsumeTopics(*topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2etool:", err)
		return 1
	}
	defer cl.Close()
	client := e2e.NewClient(cl, e2e.ClientConfig{Decryptor: dec})
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(*timeoutMs)*time.Millisecond)
	defer cancel()
	n := 0
	for n < *count {
		fetches := client.PollFetches(ctx)
		if ctx.Err() != nil && fetches.NumRecords() == 0 {
			break
		}
		for _, f := range fetches {
			for _, t := range f.Topics {
				for _, p := range t.Partitions {
					for _, r := range p.Records {
						if n == *count {
							break
						}
						printJSON(lineOf(r))
						n++
					}
					var re *e2e.RecordError
					if errors.As(p.Err, &re) && n < *count {
						printJSON(struct {
							Failed    e2e.Reason `json:"failed"`
							Partition int32      `json:"partition"`
							Offset    int64      `json:"offset"`
						}{re.Err.Reason, re.Partition, re.Offset})
						return 3
					}
					if p.Err != nil && !errors.Is(p.Err, context.DeadlineExceeded) && !errors.Is(p.Err, context.Canceled) {
						fmt.Fprintf(os.Stderr, "e2etool: fetching %s-%d: %v\n", t.Topic, p.Partition, p.Err)
					}
				}
			}
		}
	}
	if n < *count {
		printJSON(struct {
			Timeout   bool `json:"timeout"`
			Delivered int  `json:"delivered"`
		}{true, n})
		return 4
	}
	return 0
}

func lineOf(r *kgo.Record) delivered {
	hs := make([][]any, 0, len(r.Headers))
	for _, h := range r.Headers {
		hs = append(hs, []any{h.Key, hexOrNull(h.Value)})
	}
	d := delivered{Partition: r.Partition, Offset: r.Offset, Key: hexOrNull(r.Key), Value: hexOrNull(r.Value), Headers: hs, Status: e2e.StatusOf(r).String()}
	if f := e2e.FailureOf(r); f != nil {
		reason := f.Reason
		d.Reason = &reason
	}
	return d
}
