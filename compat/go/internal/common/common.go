// Package common holds what the Go scenario programs share: the suite's payloads, the value
// representation, bounded waits and the JSON outcome ({"result": ..., "violations": [...]}), as
// specified in compat/README.md ("Scenarios").
package common

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"
)

// Wait bounds every wait for a broker-side condition.
const Wait = 15 * time.Second

// Big is the size of the large value of produce-consume.
const Big = 1 << 20

// Pattern is the suite's deterministic payload: byte i is i mod 251.
func Pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i % 251)
	}
	return b
}

// Repr: nil stays null; short printable ASCII stays text; anything else is "<len> bytes sha256:<16 hex>".
func Repr(b []byte) any {
	if b == nil {
		return nil
	}
	printable := len(b) <= 64
	for _, c := range b {
		if c < 0x20 || c >= 0x7f {
			printable = false
			break
		}
	}
	if printable {
		return string(b)
	}
	sum := sha256.Sum256(b)
	return fmt.Sprintf("%d bytes sha256:%s", len(b), hex.EncodeToString(sum[:8]))
}

// Header is one record header.
type Header struct {
	Key   string
	Value []byte
}

// StandardRecord is one of the five records of produce-consume (all to partition 0).
type StandardRecord struct {
	Key     []byte
	Value   []byte
	Headers []Header
}

// Standard returns the five records of produce-consume.
func Standard() []StandardRecord {
	return []StandardRecord{
		{Key: []byte("k0"), Value: []byte("v0"), Headers: []Header{{"h1", []byte("a")}}},
		{Key: nil, Value: []byte("v1")},
		{Key: []byte("k2"), Value: nil},
		{Key: []byte("k3"), Value: []byte{}, Headers: []Header{{"x", []byte("1")}, {"x", []byte("2")}}},
		{Key: []byte("big"), Value: Pattern(Big), Headers: []Header{{"size", []byte(fmt.Sprint(Big))}}},
	}
}

// RecordRepr is how a record read back is reported.
func RecordRepr(partition int32, offset int64, key, value []byte, headers []Header) map[string]any {
	hs := []any{}
	for _, h := range headers {
		hs = append(hs, []any{h.Key, Repr(h.Value)})
	}
	return map[string]any{"p": partition, "o": offset, "k": Repr(key), "v": Repr(value), "h": hs}
}

// StandardRepr is the report of standard record i read back at offset i.
func StandardRepr(i int) map[string]any {
	r := Standard()[i]
	return RecordRepr(0, int64(i), r.Key, r.Value, r.Headers)
}

// SameJSON compares two reports by their JSON encoding.
func SameJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// WaitFor polls cond until it holds or the timeout passes.
func WaitFor(cond func() bool, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return cond()
}

// Run collects one scenario's outcome.
type Run struct {
	Prefix     string
	Result     map[string]any
	Violations []string
	ErrName    func(error) string
	closers    []func()
}

// NewRun starts an outcome for the given name prefix.
func NewRun(prefix string, errName func(error) string) *Run {
	return &Run{Prefix: prefix, Result: map[string]any{}, Violations: []string{}, ErrName: errName}
}

// Check records a violation when ok is false.
func (r *Run) Check(ok bool, format string, args ...any) {
	if !ok {
		r.Violations = append(r.Violations, fmt.Sprintf(format, args...))
	}
}

// Closing registers f to run at the end (last registered first).
func (r *Run) Closing(f func()) {
	r.closers = append([]func(){f}, r.closers...)
}

// Attempt reports a step: its value, "ok" when it returned none, or {"error": NAME}.
func (r *Run) Attempt(f func() (any, error)) any {
	v, err := f()
	if err != nil {
		return map[string]any{"error": r.ErrName(err)}
	}
	if v == nil {
		return "ok"
	}
	return v
}

// Mine keeps the names that start with the run prefix, sorted.
func (r *Run) Mine(names []string) []string {
	out := []string{}
	for _, n := range names {
		if strings.HasPrefix(n, r.Prefix) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// Abort is raised (as a panic) by Must to end a scenario on an unexpected error.
type Abort struct{ Err error }

// Must ends the scenario when err is not nil.
func Must(err error) {
	if err != nil {
		panic(Abort{err})
	}
}

// Main parses `<scenario> <bootstrap> <prefix>`, runs the scenario and prints the outcome.
func Main(scenarios map[string]func(r *Run, bootstrap string), errName func(error) string) {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: <program> <scenario> <bootstrap> <prefix>")
		os.Exit(2)
	}
	f, ok := scenarios[os.Args[1]]
	if !ok {
		fmt.Fprintln(os.Stderr, "unknown scenario", os.Args[1])
		os.Exit(2)
	}
	r := NewRun(os.Args[3], errName)
	func() {
		defer func() {
			if p := recover(); p != nil {
				if a, ok := p.(Abort); ok {
					r.Violations = append(r.Violations, fmt.Sprintf("aborted: %s: %v", errName(a.Err), a.Err))
				} else {
					r.Violations = append(r.Violations, fmt.Sprintf("aborted: panic: %v", p))
				}
			}
		}()
		f(r, os.Args[2])
	}()
	done := make(chan struct{})
	go func() {
		for _, c := range r.closers {
			c()
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		fmt.Fprintln(os.Stderr, "closing clients took over 10 s; exiting anyway")
	}
	out, err := json.Marshal(map[string]any{"result": r.Result, "violations": r.Violations})
	if err != nil {
		fmt.Fprintln(os.Stderr, "cannot encode result:", err)
		os.Exit(1)
	}
	fmt.Println(string(out))
}
