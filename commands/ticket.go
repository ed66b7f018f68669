package commands

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/events"
)

// newTicket issues the ticket a call waits on: a fresh ULID (80 random
// bits), the advertised identity, the digest of the arguments and of the
// policy, the requests that asked, and the deadline.
func (e *Engine) newTicket(c *planned, cfg *runConfig, kind string, asked []descriptor.Request) *events.TicketIssued {
	now := e.cfg.Clock()
	t := &events.TicketIssued{
		ID: e.cfg.IDs.New(now), CallID: c.req.ID, Tool: c.req.Tool, Identity: c.identity,
		ArgsSHA: argsDigest(c.req.Args), Requests: toEventRequests(asked), Kind: kind,
		PolicySHA: cfg.policy, Project: cfg.project,
	}
	if cfg.ttl > 0 {
		d := now.Add(cfg.ttl).UTC()
		t.Deadline = &d
	}
	return t
}

// argsDigest is the SHA-256 of the arguments' canonical JSON (keys sorted,
// no space); arguments that are not JSON are hashed as they are.
func argsDigest(args json.RawMessage) string {
	canon := []byte(args)
	var v any
	if json.Unmarshal(args, &v) == nil {
		if b, err := json.Marshal(v); err == nil {
			canon = b
		}
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:])
}
