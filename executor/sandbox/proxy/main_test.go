package proxy

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a goroutine outlives its test's clean-up:
// Serve must end every handler and tunnel it started.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
