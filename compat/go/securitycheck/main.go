// Command securitycheck produces and consumes over an SSL or SASL_SSL listener with franz-go or sarama,
// for test/integration/security-clients.test.ts (the test builds it: go build ./securitycheck).
//
//	securitycheck -client franz|sarama -bootstrap HOST:PORT -topic T -count N -group G
//	    -security-protocol SSL|SASL_SSL -ca-location CA.pem
//	    [-certificate-location CLIENT.crt -key-location CLIENT.key]
//	    [-sasl-mechanism SCRAM-SHA-512|SCRAM-SHA-256 -username U -password P]
//
// Produces N records (key "k<i>", value "<topic>:<i>") to partition 0 with acks=all, then reads the topic
// from the start as a member of group G until N records came or 30 s passed. Prints JSON lines:
// {"produced": N}, then one {"partition", "offset", "key", "value"} per record read; {"error": "..."} and
// exit 1 when the client fails, {"timeout": true, "consumed": k} and exit 2 when too few records came. The
// same contract as compat/python/security_check.py and dev.ledgerline.compat.SecurityCheck.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

const deadline = 30 * time.Second

type options struct {
	client, bootstrap, topic, group string
	count                           int
	protocol, ca, cert, key         string
	mechanism, username, password   string
}

func emit(v any) {
	b, _ := json.Marshal(v)
	fmt.Println(string(b))
}

func record(partition int32, offset int64, key, value []byte) map[string]any {
	str := func(b []byte) any {
		if b == nil {
			return nil
		}
		return string(b)
	}
	return map[string]any{"partition": partition, "offset": offset, "key": str(key), "value": str(value)}
}

func tlsConfig(o options) (*tls.Config, error) {
	pem, err := os.ReadFile(o.ca)
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("no certificate in %s", o.ca)
	}
	cfg := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	if o.cert != "" {
		pair, err := tls.LoadX509KeyPair(o.cert, o.key)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

func scramAuth(o options) (sasl.Mechanism, error) {
	a := scram.Auth{User: o.username, Pass: o.password}
	switch o.mechanism {
	case "SCRAM-SHA-512":
		return a.AsSha512Mechanism(), nil
	case "SCRAM-SHA-256":
		return a.AsSha256Mechanism(), nil
	}
	return nil, fmt.Errorf("unsupported SASL mechanism %q", o.mechanism)
}

func runFranz(o options, tc *tls.Config) (int, error) {
	opts := []kgo.Opt{kgo.SeedBrokers(o.bootstrap), kgo.ClientID("security-check-franz"), kgo.DialTLSConfig(tc), kgo.RetryTimeout(deadline)}
	if o.protocol == "SASL_SSL" {
		m, err := scramAuth(o)
		if err != nil {
			return 0, err
		}
		opts = append(opts, kgo.SASL(m))
	}
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()

	p, err := kgo.NewClient(append(opts, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	if err != nil {
		return 0, err
	}
	recs := make([]*kgo.Record, o.count)
	for i := range recs {
		recs[i] = &kgo.Record{Topic: o.topic, Partition: 0, Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, "%s:%d", o.topic, i)}
	}
	err = p.ProduceSync(ctx, recs...).FirstErr()
	p.Close()
	if err != nil {
		return 0, err
	}
	emit(map[string]int{"produced": o.count})

	c, err := kgo.NewClient(append(opts, kgo.ConsumerGroup(o.group), kgo.ConsumeTopics(o.topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())...)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	got := 0
	for got < o.count && ctx.Err() == nil {
		fs := c.PollFetches(ctx)
		if err := fs.Err0(); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return got, err
		}
		fs.EachRecord(func(r *kgo.Record) {
			emit(record(r.Partition, r.Offset, r.Key, r.Value))
			got++
		})
	}
	return got, nil
}

// scramClient is sarama's SCRAMClient over franz-go's SCRAM session: sarama leaves the SCRAM computation to
// the application (its examples use github.com/xdg-go/scram, which this module does not require) and runs
// the exchange itself (SaslHandshake v1, then SaslAuthenticate with each message).
type scramClient struct {
	mechanism sasl.Mechanism
	session   sasl.Session
	first     []byte
	done      bool
}

func (s *scramClient) Begin(user, password, _ string) error {
	var err error
	s.session, s.first, err = s.mechanism.Authenticate(context.Background(), "")
	return err
}

func (s *scramClient) Step(challenge string) (string, error) {
	if s.first != nil {
		msg := s.first
		s.first = nil
		return string(msg), nil
	}
	done, msg, err := s.session.Challenge([]byte(challenge))
	s.done = done
	return string(msg), err
}

func (s *scramClient) Done() bool { return s.done }

type handler struct {
	mu    sync.Mutex
	got   int
	count int
	full  chan struct{}
}

func (h *handler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (h *handler) Cleanup(sarama.ConsumerGroupSession) error { return nil }
func (h *handler) ConsumeClaim(_ sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for m := range claim.Messages() {
		h.mu.Lock()
		emit(record(m.Partition, m.Offset, m.Key, m.Value))
		h.got++
		if h.got == h.count {
			close(h.full)
		}
		h.mu.Unlock()
	}
	return nil
}

func runSarama(o options, tc *tls.Config) (int, error) {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	cfg.ClientID = "security-check-sarama"
	cfg.Net.TLS.Enable = true
	cfg.Net.TLS.Config = tc
	if o.protocol == "SASL_SSL" {
		cfg.Net.SASL.Enable = true
		cfg.Net.SASL.Handshake = true
		cfg.Net.SASL.User = o.username
		cfg.Net.SASL.Password = o.password
		switch o.mechanism {
		case "SCRAM-SHA-512":
			cfg.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA512
		case "SCRAM-SHA-256":
			cfg.Net.SASL.Mechanism = sarama.SASLTypeSCRAMSHA256
		}
		m, err := scramAuth(o)
		if err != nil {
			return 0, err
		}
		cfg.Net.SASL.SCRAMClientGeneratorFunc = func() sarama.SCRAMClient { return &scramClient{mechanism: m} }
	}
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Consumer.Return.Errors = true
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Enable = false
	cfg.Consumer.Group.Heartbeat.Interval = 500 * time.Millisecond

	p, err := sarama.NewSyncProducer([]string{o.bootstrap}, cfg)
	if err != nil {
		return 0, err
	}
	msgs := make([]*sarama.ProducerMessage, o.count)
	for i := range msgs {
		msgs[i] = &sarama.ProducerMessage{Topic: o.topic, Partition: 0, Key: sarama.StringEncoder(fmt.Sprintf("k%d", i)), Value: sarama.StringEncoder(fmt.Sprintf("%s:%d", o.topic, i))}
	}
	err = p.SendMessages(msgs)
	p.Close()
	if err != nil {
		return 0, err
	}
	emit(map[string]int{"produced": o.count})

	g, err := sarama.NewConsumerGroup([]string{o.bootstrap}, o.group, cfg)
	if err != nil {
		return 0, err
	}
	defer g.Close()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	h := &handler{count: o.count, full: make(chan struct{})}
	consumed := make(chan error, 1)
	go func() {
		for ctx.Err() == nil {
			if err := g.Consume(ctx, []string{o.topic}, h); err != nil {
				consumed <- err
				return
			}
		}
		consumed <- nil
	}()
	select {
	case <-h.full:
	case err := <-consumed:
		if err != nil {
			return h.got, err
		}
	case err := <-g.Errors():
		return h.got, err
	case <-ctx.Done():
	}
	cancel()
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.got, nil
}

func main() {
	var o options
	flag.StringVar(&o.client, "client", "", "franz or sarama")
	flag.StringVar(&o.bootstrap, "bootstrap", "", "host:port")
	flag.StringVar(&o.topic, "topic", "", "topic (partition 0 is written)")
	flag.IntVar(&o.count, "count", 5, "records to produce and read back")
	flag.StringVar(&o.group, "group", "", "consumer group")
	flag.StringVar(&o.protocol, "security-protocol", "", "SSL or SASL_SSL")
	flag.StringVar(&o.ca, "ca-location", "", "CA certificates, PEM")
	flag.StringVar(&o.cert, "certificate-location", "", "client certificate, PEM")
	flag.StringVar(&o.key, "key-location", "", "client key, PEM")
	flag.StringVar(&o.mechanism, "sasl-mechanism", "", "SCRAM-SHA-512 or SCRAM-SHA-256")
	flag.StringVar(&o.username, "username", "", "SASL user")
	flag.StringVar(&o.password, "password", "", "SASL password")
	flag.Parse()

	tc, err := tlsConfig(o)
	got := 0
	if err == nil {
		switch o.client {
		case "franz":
			got, err = runFranz(o, tc)
		case "sarama":
			got, err = runSarama(o, tc)
		default:
			err = fmt.Errorf("unknown client %q", o.client)
		}
	}
	if err != nil {
		emit(map[string]string{"error": err.Error()})
		os.Exit(1)
	}
	if got < o.count {
		emit(map[string]any{"timeout": true, "consumed": got})
		os.Exit(2)
	}
}
