package commands_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine running: every
// host a test starts, and everything the host started, must be stopped.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
