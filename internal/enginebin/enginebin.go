// Package enginebin builds the engine binary once for a test binary whose
// tests run it as a real process (the integration tests, the bench's).
package enginebin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Main builds cmd/engine into a temporary directory named after prefix,
// stores its path in *bin, runs the tests and removes the directory. It is
// the whole of a TestMain: it exits with the tests' code, or 1 when the
// build fails.
func Main(m *testing.M, prefix string, bin *string) {
	dir, err := os.MkdirTemp("", prefix+"-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*bin = filepath.Join(dir, "engine")
	build := exec.Command("go", "build", "-o", *bin, "github.com/stepgate/stepgate/cmd/engine")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build the engine binary:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
