package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"strings"
	"testing"
)

func TestRunUsage(t *testing.T) {
	tests := []struct {
		why      string
		args     []string
		code     int
		contains string
	}{
		{"no verb", nil, 2, "usage: engine"},
		{"an unknown verb", []string{"frobnicate"}, 2, "usage: engine"},
		{"a bad flag", []string{"runs", "--no-such-flag"}, 2, "flag provided but not defined"},
		{"run without a script", []string{"run"}, 2, ""},
		{"show without a run", []string{"show"}, 2, ""},
		{"bench without a workload", []string{"bench"}, 2, ""},
		{"bench of an unknown workload", []string{"bench", "w99"}, 2, ""},
		{"bench with a bad sync", []string{"bench", "raw", "--sync", "sometimes"}, 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tt.args, &stdout, &stderr)
			if err == nil {
				t.Fatal("run succeeded")
			}
			if got := exitCode(err); got != tt.code {
				t.Errorf("exit code %d (%v), want %d", got, err, tt.code)
			}
			if !strings.Contains(stderr.String(), tt.contains) {
				t.Errorf("stderr %q does not contain %q", stderr.String(), tt.contains)
			}
		})
	}
	var stderr bytes.Buffer
	if err := run(context.Background(), []string{"runs", "-h"}, &bytes.Buffer{}, &stderr); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("runs -h = %v, want flag.ErrHelp", err)
	}
}

// The demo is the README's first command: it must exit 0 and show allowed
// and blocked calls on both sides of the engine restart.
func TestDemo(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"demo"}, &stdout, &stderr); err != nil {
		t.Fatalf("demo: %v\n%s", err, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		"allow   hello from the model",
		`blocked: denied by rule read "secrets/*" (run override)`,
		"Unknown tool: rm",
		"engine stopped; starting a new engine on the same data",
		"c6   echo_fx    allow   write the release notes",
		"ended (completed)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
}
