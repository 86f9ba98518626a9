package e2e

import (
	"path/filepath"
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
