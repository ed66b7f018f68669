package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
)

// ToolSet is what a client hands to Options.OnChange: the server's tools as
// of one listing, ready to register and install.
type ToolSet struct {
	Server string
	Phase  Phase // Ready with tools; Down (Err set, no tools) when the connection is lost
	Err    error // why the server is down; scrubbed of secret values
	// Scope is the location-layer scope to register Tools under:
	// mcp-<server>-<digest>, the digest covering the server name and every
	// descriptor, so two hosts (or one host after a restart or a reconnect)
	// listing the same tools register the same scope and identities. Empty
	// when Down.
	Scope string
	// Tools call the server through the client's current connection, so
	// they stay valid across reconnects. Sorted by name.
	Tools   []*executor.Tool
	Skipped []Skipped
}

// Descriptors returns the descriptors of Tools, in order.
func (s ToolSet) Descriptors() []descriptor.Descriptor {
	out := make([]descriptor.Descriptor, len(s.Tools))
	for i, t := range s.Tools {
		out[i] = t.Descriptor()
	}
	return out
}

// scopeDigestLen is how many hex digits of the digest a scope keeps: with
// "mcp-", a 32-byte server name and "-" the scope stays within 64 bytes.
const scopeDigestLen = 24

// Scope returns the content-addressed scope of a server's descriptors:
// mcp-<server>-<first 24 hex digits of SHA-256 over the server name and
// the descriptors' identities in the "location" layer, in name order>. The
// order of descs does not matter.
func Scope(server string, descs []descriptor.Descriptor) string {
	ids := make(map[string]string, len(descs))
	names := make([]string, 0, len(descs))
	for _, d := range descs {
		ids[d.Name] = d.Identity("location", "")
		names = append(names, d.Name)
	}
	slices.Sort(names)
	h := sha256.New()
	fmt.Fprintf(h, "stepgate.mcp.scope.v1\x00%s\x00", server)
	for _, n := range names {
		fmt.Fprintf(h, "%s\x00", ids[n])
	}
	return "mcp-" + server + "-" + hex.EncodeToString(h.Sum(nil))[:scopeDigestLen]
}

// toolSet converts a listing into tools calling through c, the listing
// redacted first: names, descriptions and schemas reach the registry, the
// log and `engine mcp ls`.
func (c *Client) toolSet(s *session, listed []*sdk.Tool) (ToolSet, error) {
	redacted, remote := s.red.redactTools(listed)
	conv, skipped := Convert(c.name, s.srv.Trust, redacted, c.opts.MaxDescription)
	set := ToolSet{Server: c.name, Phase: Ready, Skipped: skipped}
	for _, cv := range conv {
		name, ok := remote[cv.Remote]
		if !ok {
			name = cv.Remote
		}
		var opts []executor.Option
		if s.srv.URL != "" { // an HTTP server is reached from any host; a stdio one runs for the location
			opts = append(opts, executor.Anywhere())
		}
		t, err := executor.NewRaw(cv.Descriptor, c.handler(name), opts...)
		if err != nil { // Convert validated the descriptor; kept as a guard
			set.Skipped = append(set.Skipped, Skipped{Remote: cv.Remote, Name: cv.Descriptor.Name, Reason: oneLine(err.Error())})
			continue
		}
		set.Tools = append(set.Tools, t)
	}
	set.Scope = Scope(c.name, set.Descriptors())
	return set, nil
}

// handler calls remote on the current connection with the call's context:
// its cancellation reaches the server as notifications/cancelled.
func (c *Client) handler(remote string) executor.RawHandler {
	return func(ctx context.Context, _ executor.Call, args json.RawMessage) (executor.Result, error) {
		s := c.sess.Load()
		if s == nil {
			why := strings.TrimPrefix(c.State().LastError, ErrUnavailable.Error()+": ")
			if why == "" {
				why = "not connected"
			}
			return executor.ErrorResult(Unavailable(c.name, why)), nil
		}
		r, err := s.cs.CallTool(ctx, &sdk.CallToolParams{Name: remote, Arguments: args})
		if err != nil {
			return executor.ErrorResult(c.callError(ctx, s, err)), nil
		}
		res, err := MapResult(r)
		if err != nil {
			return executor.ErrorResult(fmt.Sprintf("MCP server %s returned an invalid result: %s", c.name, s.red.Redact(err.Error()))), nil
		}
		return s.red.RedactResult(res), nil
	}
}

// JSON-RPC codes the SDK uses for its own side's failures: a request the
// transport could not deliver, a client or server closing.
const (
	codeRejected      = -32005
	codeServerClosing = -32004
	codeClientClosing = -32003
)

// callError words a failed call for the model: the call's own end, an error
// the server answered with, or the server being unavailable. A server that
// is unavailable mid-call has its connection closed, so the client
// reconnects (an HTTP session whose server went away would otherwise stay).
func (c *Client) callError(ctx context.Context, s *session, err error) string {
	if ctx.Err() != nil {
		return "Tool call was cancelled: " + ctx.Err().Error()
	}
	if we, ok := errors.AsType[*jsonrpc.Error](err); ok && we.Code != codeRejected && we.Code != codeServerClosing && we.Code != codeClientClosing {
		return fmt.Sprintf("MCP server %s refused the call: %s", c.name, s.red.Redact(oneLine(we.Message)))
	}
	go func() { _ = s.cs.Close() }()
	return Unavailable(c.name, s.red.Redact(oneLine(err.Error())))
}
