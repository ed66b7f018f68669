package commands

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/stepgate/stepgate/executor/mcp"
)

// openScope is the scope a tool set registers under: its content-addressed
// scope, or, when that scope was closed (the server's tools changed and
// changed back), the first generation of it that is still open. Every host
// derives the same one from the same log.
func (m *mcpHosts) openScope(base string) string {
	scope := base
	for g := 1; m.reg.proj.ScopeClosed(scope) && g < 1000; g++ {
		scope = scopeGeneration(base, g)
	}
	return scope
}

// scopeGeneration is generation g of scope base (mcp-<server>-<digest>):
// the same length, its digest over base and g.
func scopeGeneration(base string, g int) string {
	i := strings.LastIndexByte(base, '-')
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d", base, g))
	return base[:i+1] + hex.EncodeToString(sum[:])[:len(base)-i-1]
}

// registered reports whether the location layer already holds every tool
// of set under scope, with the identity it would register.
func (m *mcpHosts) registered(scope string, set mcp.ToolSet) bool {
	eff, _ := m.reg.proj.Registry()
	for _, d := range set.Descriptors() {
		r, ok := eff[d.Name]
		if !ok || r.Scope != scope || r.Identity != d.WithDefaults().Identity(LocationLayer, scope) {
			return false
		}
	}
	return true
}

// otherScopes are the server's scopes other than keep that still have
// registrations in force, and the one this host registered last.
func (m *mcpHosts) otherScopes(server, keep string) []string {
	seen := map[string]bool{keep: true}
	var out []string
	add := func(scope string) {
		if scope != "" && !seen[scope] && !m.reg.proj.ScopeClosed(scope) {
			seen[scope] = true
			out = append(out, scope)
		}
	}
	add(m.scopes[server])
	eff, _ := m.reg.proj.Registry()
	for name, r := range eff {
		if strings.HasPrefix(name, mcp.Prefix+server+"__") && strings.HasPrefix(r.Scope, "mcp-"+server+"-") {
			add(r.Scope)
		}
	}
	return out
}
