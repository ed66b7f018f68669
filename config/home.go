package config

import (
	"os"
	"path/filepath"

	"github.com/goccy/go-yaml/ast"
	"github.com/stepgate/stepgate/gate"
)

// Home is the home directory of the user the process runs as, as rule
// patterns expand "~" and "$HOME" to (see gate.ExpandHome): absolute, in
// '/' form, with its symlinks resolved, since the paths the gate sees are
// real paths. "" when there is none: HOME unset, empty or not absolute.
func Home() string {
	home, err := os.UserHomeDir()
	if err != nil || !filepath.IsAbs(home) {
		return ""
	}
	if real, err := filepath.EvalSymlinks(home); err == nil {
		home = real
	}
	return filepath.ToSlash(filepath.Clean(home))
}

// resourcePattern is a rule's resource pattern as the gate matches it: with
// a leading home reference expanded to [Home] (every action but bash). A
// pattern that needs the home when there is none is an error at n: left as
// written, a deny rule on "~/.ssh/*" would never match.
func resourcePattern(s state, n ast.Node, action, resource string) (string, error) {
	if _, ok := gate.HomeRef(resource); !ok || !gate.HomeAction(action) {
		return resource, nil
	}
	out, ok := gate.ExpandHome(resource, Home())
	if !ok {
		return "", s.fail(n, "resource %q names the home directory, and there is none (HOME is not set or not absolute)", resource)
	}
	return out, nil
}
