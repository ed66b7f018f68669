package commands

import (
	"fmt"
	"time"
)

// DefaultLeaseTTL is how long a host's lease lasts without a renewal before
// another host takes over what it left in doubt.
const DefaultLeaseTTL = 5 * time.Second

// LeaseConfig configures a host's lease: a heartbeat in the log's lease
// bucket (step.Leases). The zero value is the default lease.
type LeaseConfig struct {
	// TTL is how long the lease lasts without a renewal: a host whose
	// renewals stopped for TTL, as another host counts it, is taken over by
	// that host. Default DefaultLeaseTTL.
	TTL time.Duration `json:"ttl" yaml:"ttl"`
	// Renew is how often the host renews its lease; default TTL/5.
	Renew time.Duration `json:"renew" yaml:"renew"`
	// Off runs the host without a lease: it never refuses a call for want
	// of one, never takes another host over, and what it leaves in doubt
	// waits for its restart or RecoverHost.
	Off bool `json:"off" yaml:"off"`
}

// Validate reports a configuration that cannot work: renewals must come at
// least twice per TTL.
func (c LeaseConfig) Validate() error {
	c = c.withDefaults()
	if c.TTL <= 0 || c.Renew <= 0 || 2*c.Renew > c.TTL {
		return fmt.Errorf("lease: ttl %s, renew every %s: want both positive, renewals at least twice per ttl: %w", c.TTL, c.Renew, ErrInvalidRequest)
	}
	return nil
}

func (c LeaseConfig) withDefaults() LeaseConfig {
	if c.TTL == 0 {
		c.TTL = DefaultLeaseTTL
	}
	if c.Renew == 0 {
		c.Renew = c.TTL / 5
	}
	return c
}

// LeaseStatus is what a host knows of its own lease, for monitoring.
type LeaseStatus struct {
	// On is false for a host without a lease (LeaseConfig.Off).
	On bool
	// Held is true while the lease is valid: renewed less than the TTL
	// less its margin ago, and not taken over since.
	Held bool
	// Takeovers counts the leases of other hosts this host took over.
	Takeovers uint64
}

// acquirePatience bounds how long a starting host waits for the lease
// bucket to answer (a bucket just made on a cluster, NATS restarting)
// before its start fails.
const acquirePatience = 30 * time.Second
