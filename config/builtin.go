package config

import (
	"os"
	"path/filepath"

	"github.com/stepgate/stepgate/gate"
)

// Builtin is the layer of built-in agent defaults: build allows everything
// but asks for external directories (except the tool-output directory and
// the system's temporary directory) and for reading *.env and *.env.* (but
// not *.env.example); explore denies everything but read, glob, grep,
// webfetch and websearch. Its protected paths are [DefaultProtectedPaths].
func Builtin(toolOutputDir string) *File {
	rule := func(action, resource string, eff gate.Effect) gate.Rule {
		return gate.Rule{Action: action, Resource: resource, Effect: eff, Source: gate.SourceDefault}
	}
	build := gate.Ruleset{
		rule("*", "*", gate.Allow),
		rule("external_directory", "*", gate.Ask),
		rule("external_directory", filepath.ToSlash(os.TempDir())+"/*", gate.Allow),
	}
	if toolOutputDir != "" {
		build = append(build, rule("external_directory", filepath.ToSlash(toolOutputDir)+"/*", gate.Allow))
	}
	build = append(build,
		rule("read", "*.env", gate.Ask),
		rule("read", "*.env.*", gate.Ask),
		rule("read", "*.env.example", gate.Allow),
	)
	explore := gate.Ruleset{rule("*", "*", gate.Deny)}
	for _, a := range []string{"read", "glob", "grep", "webfetch", "websearch"} {
		explore = append(explore, rule(a, "*", gate.Allow))
	}
	return &File{Agents: map[string]gate.Ruleset{"build": build, "explore": explore}, ProtectAdd: DefaultProtectedPaths()}
}
