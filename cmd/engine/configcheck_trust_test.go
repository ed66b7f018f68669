package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// engine config check says whether the project file is trusted and lists
// what a project that only narrows asked for and was not granted: a bash
// allow over the user's ask, a "*": allow over the built-in asks, an ask
// over the user's deny, a longer wait, higher bounds; trusted, it lists
// nothing. Paths are written as $LOC, $XDG and $DATA.
func TestConfigCheckNotGrantedGolden(t *testing.T) {
	dir := t.TempDir()
	loc, xdg, data := filepath.Join(dir, "loc"), filepath.Join(dir, "xdg"), filepath.Join(dir, "data")
	t.Setenv("XDG_CONFIG_HOME", xdg)
	t.Setenv("TMPDIR", "/tmp") // the built-in agent allows external_directory "/tmp/*", whatever the test's own
	userFile := filepath.Join(xdg, "stepgate", "config.yaml")
	for _, d := range []string{filepath.Dir(userFile), filepath.Join(loc, ".stepgate")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	const user = "agents:\n  build:\n    ticket_ttl: 15m\n    permission:\n      bash: { \"*\": ask, \"rm *\": deny }\n"
	write(userFile, user)
	write(filepath.Join(loc, ".stepgate", "config.yaml"), "agents:\n  build:\n    ticket_ttl: 100h\n    permission:\n"+
		"      \"*\": allow\n      bash: { \"*\": ask, \"git *\": allow, \"curl *\": deny }\n      edit: { \"*.lock\": deny }\n"+
		"tool_output: { max_lines: 100000 }\n")
	check := func() string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), []string{"config", "check", "--location", loc, "--data", data}, &stdout, &stderr); err != nil {
			t.Fatalf("config check: %v\n%s", err, stderr.String())
		}
		out := strings.NewReplacer(loc, "$LOC", xdg, "$XDG", data, "$DATA").Replace(stdout.String())
		hostCan := regexp.MustCompile(`(?m)^  this host can enforce: .*$`)      // differs from one machine to another
		return hostCan.ReplaceAllString(out, "  this host can enforce: $$HOST") // what this machine's kernel offers
	}
	goldenFile(t, "configcheck_narrowing.golden", []byte(check()))
	write(userFile, user+"trusted_projects: [\""+loc+"\"]\n")
	goldenFile(t, "configcheck_trusted.golden", []byte(check()))
}
