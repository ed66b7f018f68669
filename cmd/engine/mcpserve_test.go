package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// engine mcp's command lines it cannot act on are usage errors (exit 2)
// that say why, before anything is opened.
func TestMCPUsage(t *testing.T) {
	tests := []struct {
		why      string
		args     []string
		contains string
	}{
		{"no subcommand", []string{"mcp"}, "usage: engine mcp"},
		{"an unknown subcommand", []string{"mcp", "frobnicate"}, "usage: engine mcp"},
		{"a bad flag", []string{"mcp", "serve", "--no-such-flag"}, "flag provided but not defined"},
		{"a non-loopback listener", []string{"mcp", "serve", "--listen", "0.0.0.0:0"}, ""},
		{"a host name to listen on", []string{"mcp", "serve", "--listen", "example.internal:0", "--listen-remote"}, ""},
		{"no wait", []string{"mcp", "serve", "--wait", "0s"}, ""},
		{"a stray argument", []string{"mcp", "serve", "extra"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tt.args, &stdout, &stderr)
			if err == nil || exitCode(err) != 2 {
				t.Fatalf("engine %s = %v (exit %d), want a usage error", strings.Join(tt.args, " "), err, exitCode(err))
			}
			if !strings.Contains(stderr.String(), tt.contains) {
				t.Errorf("stderr %q does not contain %q", stderr.String(), tt.contains)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout %q: a usage error writes nothing there (it is the protocol's)", stdout.String())
			}
		})
	}
}
