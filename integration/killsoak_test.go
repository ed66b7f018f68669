//go:build soak

package integration

import "testing"

// TestKill9Soak is TestKill9Trials at soak size: go test -tags soak.
func TestKill9Soak(t *testing.T) {
	kill9Trials(t, 200)
}
