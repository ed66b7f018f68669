package commands

import (
	"os"
	"path/filepath"

	"github.com/stepgate/stepgate/gate"
)

// agentRules resolves an agent's built-in ruleset. An agent that cannot be
// resolved gets deny-all, never ask and never allow.
func agentRules(agent, toolOutputDir string) gate.Ruleset {
	rule := func(action, resource string, eff gate.Effect) gate.Rule {
		return gate.Rule{Action: action, Resource: resource, Effect: eff, Source: gate.SourceDefault}
	}
	switch agent {
	case "build":
		rs := gate.Ruleset{
			rule("*", "*", gate.Allow),
			rule("external_directory", "*", gate.Ask),
			rule("external_directory", filepath.ToSlash(os.TempDir())+"/*", gate.Allow),
		}
		if toolOutputDir != "" {
			rs = append(rs, rule("external_directory", filepath.ToSlash(toolOutputDir)+"/*", gate.Allow))
		}
		return append(rs,
			rule("read", "*.env", gate.Ask),
			rule("read", "*.env.*", gate.Ask),
			rule("read", "*.env.example", gate.Allow),
		)
	case "explore":
		rs := gate.Ruleset{rule("*", "*", gate.Deny)}
		for _, a := range []string{"read", "glob", "grep", "webfetch", "websearch"} {
			rs = append(rs, rule(a, "*", gate.Allow))
		}
		return rs
	}
	return gate.DenyAllRules(gate.SourceDefault)
}
