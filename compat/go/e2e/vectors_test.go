package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVectors reproduces every test vector of test/vectors/e2e (seal: the exact record, the unwraps, the
// opening; open: the exact failure reason or record).
func TestVectors(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "test", "vectors", "e2e")
	results, err := CheckVectorDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) < 20 {
		t.Fatalf("found %d vectors in %s, want the full set", len(results), dir)
	}
	for _, r := range results {
		t.Run(r.File, func(t *testing.T) {
			if r.Err != nil {
				t.Fatal(r.Err)
			}
		})
	}
}

// TestVectorCheckDetectsADifference: the checker is strict (a changed output byte, a wrong reason fail).
func TestVectorCheckDetectsADifference(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "test", "vectors", "e2e")
	for file, from := range map[string]string{
		"seal-x25519-basic.json": `"value": "c4`,
		"open-no-key.json":       `"error": "no-key"`,
	} {
		data, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		to := strings.Replace(from, "c4", "c5", 1)
		to = strings.Replace(to, "no-key", "unwrap-failed", 1)
		changed := strings.Replace(string(data), from, to, 1)
		if changed == string(data) {
			t.Fatalf("%s: %q not found", file, from)
		}
		if err := CheckVector([]byte(changed)); err == nil {
			t.Errorf("%s changed passes", file)
		}
	}
}
