package config_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/gate"
	"pgregory.net/rapid"
)

// genMCPEntry is one server entry's YAML (flow form): with transport, a
// declaration; without, a narrowing. Project entries may try what a project
// may not (trust: true, a secret, a transport for a declared server).
func genMCPEntry(t *rapid.T, label string, transport bool) string {
	var parts []string
	if transport {
		if rapid.Bool().Draw(t, label+"http") {
			parts = append(parts, `url: "https://127.0.0.1:9/`+label+`"`)
			if rapid.Bool().Draw(t, label+"hdr") {
				parts = append(parts, `headers: {A: "`+rapid.SampledFrom([]string{"v", "secret://S"}).Draw(t, label+"hv")+`"}`)
			}
		} else {
			parts = append(parts, "command: [srv-"+label+"]")
		}
	}
	if rapid.Bool().Draw(t, label+"trust?") {
		parts = append(parts, fmt.Sprintf("trust: %v", rapid.Bool().Draw(t, label+"trust")))
	}
	if rapid.Bool().Draw(t, label+"deny?") {
		parts = append(parts, fmt.Sprintf("deny_all: %v", rapid.Bool().Draw(t, label+"deny")))
	}
	if rapid.Bool().Draw(t, label+"allow?") {
		pats := rapid.SliceOfN(rapid.StringMatching(`[ab*]{1,3}`), 0, 3).Draw(t, label+"allow")
		parts = append(parts, `allow: ["`+strings.Join(pats, `", "`)+`"]`)
		if len(pats) == 0 {
			parts[len(parts)-1] = "allow: []"
		}
	}
	if rapid.Bool().Draw(t, label+"ttl?") {
		parts = append(parts, fmt.Sprintf("ticket_ttl: %dm", rapid.IntRange(1, 5).Draw(t, label+"ttl")))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// A project layer only narrows what the user's file declares: with it,
// no user-declared server is reached another way, trusted where it was
// not, enabled where it was not, allows a tool it did not, or waits
// longer; and a server only the project declares is untrusted, holds no
// secret reference, and (stdio or HTTP) is started only when the user's
// file enables it by name.
func TestMCPProjectOnlyNarrows(t *testing.T) {
	names := []string{"a", "b", "c", "d"}
	rapid.Check(t, func(t *rapid.T) {
		var user strings.Builder
		user.WriteString("mcp:\n")
		declared := map[string]bool{}
		for _, n := range names {
			if rapid.Bool().Draw(t, "user-"+n) {
				declared[n] = true
				user.WriteString("  " + n + ": " + genMCPEntry(t, "u"+n, true) + "\n")
			}
		}
		enabled := rapid.SliceOfDistinct(rapid.SampledFrom(names), rapid.ID).Draw(t, "enabled")
		if len(enabled) > 0 {
			user.WriteString("mcp_project_servers: [" + strings.Join(enabled, ", ") + "]\n")
		}
		var project strings.Builder
		project.WriteString("mcp:\n")
		for _, n := range names {
			if rapid.Bool().Draw(t, "project-"+n) {
				transport := !declared[n] || rapid.IntRange(0, 9).Draw(t, "replace-"+n) == 0
				project.WriteString("  " + n + ": " + genMCPEntry(t, "p"+n, transport) + "\n")
			}
		}
		if len(declared) == 0 {
			user.Reset()
		}
		uf, err := config.Parse("user.yaml", []byte(user.String()), gate.SourceUser)
		if err != nil {
			if len(declared) > 0 {
				t.Fatalf("user file refused: %v\n%s", err, user.String())
			}
			return
		}
		before, err := config.ResolveMCP([]*config.File{uf})
		if err != nil {
			t.Fatalf("user file alone: %v", err)
		}
		pf, err := config.Parse("project.yaml", []byte(project.String()), gate.SourceProject)
		if err != nil {
			return // refused: the location is denied everything
		}
		after, err := config.ResolveMCP([]*config.File{uf, pf})
		if err != nil {
			return
		}
		old := map[string]config.MCPServer{}
		for _, s := range before {
			old[s.Name] = s
		}
		tools := []string{"a", "b", "ab", "ba", "aa", "bab", "x"}
		for _, s := range after {
			o, had := old[s.Name]
			if !had {
				if s.Source != "project.yaml" || s.Trust || strings.Contains(fmt.Sprint(s.Headers, s.Env), "secret://") ||
					(s.Enabled && !slices.Contains(enabled, s.Name)) {
					t.Fatalf("project-declared server %+v", s)
				}
				continue
			}
			if s.URL != o.URL || !slices.Equal(s.Command, o.Command) || !maps.Equal(s.Env, o.Env) || !maps.Equal(s.Headers, o.Headers) || s.Source != o.Source {
				t.Fatalf("the project changed how %s is reached: %+v, was %+v", s.Name, s, o)
			}
			if s.Trust && !o.Trust || s.Enabled && !o.Enabled || o.DenyAll && !s.DenyAll {
				t.Fatalf("the project widened %s: %+v, was %+v", s.Name, s, o)
			}
			if o.TicketTTL > 0 && (s.TicketTTL == 0 || s.TicketTTL > o.TicketTTL) {
				t.Fatalf("the project lengthened %s's ticket_ttl: %v, was %v", s.Name, s.TicketTTL, o.TicketTTL)
			}
			for _, tool := range tools {
				if s.Allows(tool) && !o.Allows(tool) {
					t.Fatalf("the project allowed %s's tool %q: %v, was %v", s.Name, tool, s.Allow, o.Allow)
				}
			}
		}
		for n := range old {
			if !slices.ContainsFunc(after, func(s config.MCPServer) bool { return s.Name == n }) {
				t.Fatalf("the project removed %s", n)
			}
		}
	})
}
