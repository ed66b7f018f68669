//go:build soak

package integration

import "testing"

// TestLeaseKillSoak is TestLeaseKillTrials at soak size: go test -tags soak.
func TestLeaseKillSoak(t *testing.T) {
	leaseKillTrials(t, 20)
}
