package main

import (
	"flag"
	"testing"

	"github.com/stepgate/stepgate/internal/golden"
)

var update = flag.Bool("update", false, "rewrite golden files")

// goldenFile compares got with testdata/name, or rewrites it under -update.
func goldenFile(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, name, got, *update)
}
