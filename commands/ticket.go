package commands

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/internal/vocab"
)

// ruleTTL is how long a ticket asked for by rule waits: the rule's own
// ticket_ttl, else the run's.
func ruleTTL(rule *gate.Rule, run time.Duration) time.Duration {
	if rule != nil && rule.TicketTTL != "" {
		if d, err := time.ParseDuration(rule.TicketTTL); err == nil && d > 0 {
			return d
		}
	}
	return run
}

// argsDigest is the SHA-256 of the arguments' canonical JSON (keys sorted,
// no space); arguments that are not JSON are hashed as they are.
func argsDigest(args json.RawMessage) string {
	canon := []byte(args)
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber() // numbers as written, not rounded through float64
	var v any
	if dec.Decode(&v) == nil {
		if b, err := json.Marshal(v); err == nil {
			canon = b
		}
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:])
}

// newTicket issues the ticket a call waits on: a fresh ULID (80 random
// bits), the advertised identity, the digest of the arguments and of the
// policy, the requests that asked, and the deadline.
func (h *submitter) newTicket(c *planned, cfg *runConfig, kind string, asked []descriptor.Request, ttl time.Duration) *events.TicketIssued {
	now := h.cfg.Clock()
	t := &events.TicketIssued{
		ID: h.cfg.IDs.New(now), CallID: c.req.ID, Tool: c.req.Tool, Identity: c.identity,
		ArgsSHA: argsDigest(c.req.Args), Requests: vocab.EventRequests(asked), Kind: kind,
		PolicySHA: cfg.policy, Project: cfg.project,
	}
	if ttl > 0 {
		d := now.Add(ttl).UTC()
		t.Deadline = &d
	}
	return t
}
