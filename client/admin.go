package client

import "github.com/stepgate/stepgate/descriptor"

// CloseScopeRequest names the scope to close.
type CloseScopeRequest struct {
	Scope string `json:"scope"`
}

// RegisterRequest registers tools in the location layer, in one scope.
type RegisterRequest struct {
	// Scope to register in; empty: a new one.
	Scope string `json:"scope,omitempty"`
	// Tools are the descriptors; every name is validated before any is added.
	Tools []descriptor.Descriptor `json:"tools"`
}

// RegisterResult names the scope and each tool's identity.
type RegisterResult struct {
	Scope      string            `json:"scope"`
	Identities map[string]string `json:"identities"`
}

// RecoverRequest names an engine host that is gone for good.
type RecoverRequest struct {
	// Host is the gone engine's --host name.
	Host string `json:"host"`
}

// RecoverResult lists the steps a recovery settled.
type RecoverResult struct {
	Host  string          `json:"host"`
	Steps []RecoveredStep `json:"steps"`
}

// RecoveredStep is one step a recovery committed to.
type RecoveredStep struct {
	Run  string `json:"run"`
	Step int    `json:"step"`
}

// SweepResult says what an output sweep deleted.
type SweepResult struct {
	Dir     string   `json:"dir"`
	Deleted []string `json:"deleted"`
}

// QuarantineRequest asks for the quarantined messages. It has no fields
// yet; it is a struct so that filters can be added.
type QuarantineRequest struct{}

// QuarantineList is the quarantine as of a stream sequence: the latest
// messages (at most the projection keeps, oldest first) and how many
// there were in all.
type QuarantineList struct {
	Seq      uint64        `json:"seq"`
	Total    uint64        `json:"total"`
	Messages []Quarantined `json:"messages"`
}

// Quarantined is one message of the log a projection skipped.
type Quarantined struct {
	Seq     uint64 `json:"seq"`
	Subject string `json:"subject"`
	// Commit is the envelope's id, when the message decoded.
	Commit string `json:"commit,omitempty"`
	Reason string `json:"reason"`
}
