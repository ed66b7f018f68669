package projection_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every projector, consumer and embedded server a test starts is stopped by
// the time the package's tests end.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
