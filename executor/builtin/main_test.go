package builtin_test

import (
	"os"
	"testing"

	"github.com/stepgate/stepgate/executor/sandbox"
)

// TestMain runs the sandbox helper when the test binary was re-executed
// as one (the bash tool's sandboxed calls).
func TestMain(m *testing.M) {
	sandbox.MaybeRun()
	os.Exit(m.Run())
}
