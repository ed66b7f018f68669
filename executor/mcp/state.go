package mcp

import (
	"slices"
	"time"

	"github.com/stepgate/stepgate/descriptor"
)

// Phase is where a client's connection stands.
type Phase string

const (
	// Connecting: resolving the server and opening a connection.
	Connecting Phase = "connecting"
	// Ready: connected, its tools listed.
	Ready Phase = "ready"
	// Down: not connected; LastError says why. The client retries with
	// backoff until its Run ends.
	Down Phase = "down"
)

// State is a client's connection as `engine mcp ls` shows it.
type State struct {
	Server string
	Phase  Phase
	// LastError is why the connection is down or last failed, scrubbed of
	// secret values; empty when Ready.
	LastError string
	// Since is when Phase was entered.
	Since time.Time
	// Scope is the content-addressed scope of the tool set (see ToolSet);
	// empty unless Ready.
	Scope string
	// Tools are the registered tools' descriptors, sorted by name; Skipped
	// the tools left out and why. Both are from the last listing while
	// Ready, nil otherwise.
	Tools   []descriptor.Descriptor
	Skipped []Skipped
}

// State returns the client's current state; the slices are the caller's.
func (c *Client) State() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.state
	s.Tools = slices.Clone(s.Tools)
	s.Skipped = slices.Clone(s.Skipped)
	return s
}

// setPhase enters Connecting or Down; a Down state forgets the tools. A
// client that is down stays down while it tries again: Connecting is only
// the first attempt, so `engine mcp ls` shows a server that keeps failing as
// down, with its last error and since when, however its attempts fall.
func (c *Client) setPhase(p Phase, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p == Connecting && (c.state.Phase == Connecting || c.state.Phase == Down) {
		return
	}
	st := State{Server: c.name, Phase: p, Since: time.Now()}
	if err != nil {
		st.LastError = err.Error()
	} else {
		st.LastError = c.state.LastError
	}
	c.state = st
}
