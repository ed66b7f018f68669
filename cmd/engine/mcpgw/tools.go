package mcpgw

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sgclient "github.com/stepgate/stepgate/client"
)

// objectSchema reports whether schema is a JSON object whose type is
// "object": what MCP requires of a tool's input schema.
func objectSchema(schema json.RawMessage) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(schema, &m); err != nil {
		return fmt.Errorf("input schema is not a JSON object: %w", err)
	}
	if !bytes.Equal(bytes.TrimSpace(m["type"]), []byte(`"object"`)) {
		return fmt.Errorf(`input schema's type is %s, not "object"`, m["type"])
	}
	return nil
}

// syncTools makes the server's tool list the catalogue: a tool added or
// changed since the last list is added (the server then tells the clients
// the list changed), one gone is removed. A tool whose input schema MCP
// cannot carry is left out with a warning.
func (g *Gateway) syncTools(cat sgclient.Catalog) {
	g.toolsMu.Lock()
	defer g.toolsMu.Unlock()
	seen := make(map[string]bool, len(cat.Tools))
	for _, t := range cat.Tools {
		if err := objectSchema(t.InputSchema); err != nil {
			g.log.Warn("tool not listed over MCP", "tool", t.Name, "err", err)
			continue
		}
		seen[t.Name] = true
		sum := sha256.Sum256(append([]byte(t.Description+"\x00"), t.InputSchema...))
		digest := hex.EncodeToString(sum[:])
		if g.listed[t.Name] == digest {
			continue
		}
		g.listed[t.Name] = digest
		g.server.AddTool(&mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: slices.Clone(t.InputSchema)}, g.callTool)
	}
	var gone []string
	for name := range g.listed {
		if !seen[name] {
			gone = append(gone, name)
			delete(g.listed, name)
		}
	}
	if len(gone) > 0 {
		g.server.RemoveTools(gone...)
	}
}

// relist materializes the run's catalogue again before each tools/list,
// so the list is the catalogue as the engine advertises it now. (Each
// tools/call does too, after its step: a catalogue that changed meanwhile
// reaches the clients as notifications/tools/list_changed.)
func (g *Gateway) relist(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "tools/list" {
			g.refreshTools(ctx)
		}
		return next(ctx, method, req)
	}
}

// refreshTools materializes the run's catalogue and makes it the tool
// list; a failure leaves the list as last materialized.
func (g *Gateway) refreshTools(ctx context.Context) {
	cat, err := g.api.Materialize(ctx, sgclient.MaterializeRequest{Run: g.run})
	if err != nil {
		g.log.Warn("materialize the run's catalogue; the tool list stays as last materialized", "run", g.run, "err", err)
		return
	}
	g.syncTools(*cat)
}
