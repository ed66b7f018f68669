package commands_test

import (
	"testing"

	"github.com/stepgate/stepgate/executor/sandbox"
	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine running: every
// host a test starts, and everything the host started, must be stopped.
func TestMain(m *testing.M) {
	sandbox.MaybeRun() // the sandbox helper re-executes this binary
	goleak.VerifyTestMain(m)
}
