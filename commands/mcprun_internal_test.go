package commands

import (
	"strings"
	"testing"
	"time"

	"github.com/stepgate/stepgate/events"
	"pgregory.net/rapid"
)

func TestMCPVisible(t *testing.T) {
	pins := []events.MCPServerPin{
		{Server: "files", Allow: [][]string{{"read_*", "list"}, {"read_file"}}},
		{Server: "off", DenyAll: true},
		{Server: "all"},
	}
	for name, want := range map[string]bool{
		"read":                  true, // not an MCP tool
		"mcp__files__read_file": true,
		"mcp__files__read_dir":  false, // outside the second list
		"mcp__files__list":      false,
		"mcp__off__anything":    false, // deny_all
		"mcp__all__x":           true,
		"mcp__all__a__b":        true,  // the tool's own __ stays the tool's
		"mcp__other__x":         false, // not pinned
		"mcp__all":              false, // names no tool
		"mcp____x":              false,
		"mcp__":                 false,
	} {
		if got := mcpVisible(name, pins); got != want {
			t.Errorf("mcpVisible(%q) = %v, want %v", name, got, want)
		}
	}
	if mcpVisible("mcp__all__x", nil) {
		t.Error("a run that pins no server sees an MCP tool")
	}
}

func TestMCPTTL(t *testing.T) {
	pins := []events.MCPServerPin{{Server: "s", TicketTTLMs: 60_000}, {Server: "free"}}
	for _, tt := range []struct {
		tool      string
		ttl, want time.Duration
	}{
		{"mcp__s__x", 0, time.Minute},           // for ever yields to the cap
		{"mcp__s__x", time.Hour, time.Minute},   // the shorter wins
		{"mcp__s__x", time.Second, time.Second}, // the rule's or run's is shorter
		{"mcp__free__x", time.Hour, time.Hour},  // no cap
		{"mcp__other__x", time.Hour, time.Hour}, // not pinned
		{"bash", 2 * time.Hour, 2 * time.Hour},  // not an MCP tool
	} {
		if got := mcpTTL(pins, tt.tool, tt.ttl); got != tt.want {
			t.Errorf("mcpTTL(%s, %s) = %s, want %s", tt.tool, tt.ttl, got, tt.want)
		}
	}
}

// A scope's generations keep its length and prefix, differ from it and
// from each other, and are the same on every host.
func TestScopeGeneration(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		server := rapid.StringMatching(`[A-Za-z][A-Za-z0-9-]{0,31}`).Draw(t, "server")
		base := "mcp-" + server + "-" + rapid.StringMatching(`[0-9a-f]{24}`).Draw(t, "digest")
		g := rapid.IntRange(1, 999).Draw(t, "g")
		a, b := scopeGeneration(base, g), scopeGeneration(base, g+1)
		if a != scopeGeneration(base, g) || a == base || a == b {
			t.Fatalf("generations of %s: %s, %s", base, a, b)
		}
		if len(a) != len(base) || !strings.HasPrefix(a, "mcp-"+server+"-") || !validProject(a) {
			t.Fatalf("generation %d of %s is %s", g, base, a)
		}
	})
}

// mcpServerOf splits every name it accepts back into the name, and an
// accepted name's visibility follows its server's pin only.
func FuzzMCPServerOf(f *testing.F) {
	for _, s := range []string{"mcp__test__echo", "mcp__a__b__c", "mcp__", "mcp____x", "read", "mcp__test__", "MCP__x__y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		server, tool, ok := mcpServerOf(name)
		if !ok {
			if strings.HasPrefix(name, "mcp__") && mcpVisible(name, []events.MCPServerPin{{Server: server}}) {
				t.Fatalf("%q names no server yet is visible", name)
			}
			return
		}
		if "mcp__"+server+"__"+tool != name || strings.Contains(server, "__") || server == "" || tool == "" {
			t.Fatalf("%q split as %q, %q", name, server, tool)
		}
		if !mcpVisible(name, []events.MCPServerPin{{Server: server}}) || mcpVisible(name, []events.MCPServerPin{{Server: server, DenyAll: true}}) {
			t.Fatalf("%q: visibility does not follow its server's pin", name)
		}
	})
}
