package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// knownProvider reports whether name is a provider engine agent speaks.
func knownProvider(name string) bool {
	switch name {
	case "openai", "openai-responses", "anthropic":
		return true
	}
	return false
}

// apiKey is the provider's key from the environment: ANTHROPIC_API_KEY for
// anthropic, OPENAI_API_KEY for the others; "" when unset (a local
// OpenAI-compatible server needs none). It is given to the provider only:
// never recorded, logged or printed.
func apiKey(provider string, getenv func(string) string) string {
	if provider == "anthropic" {
		return getenv("ANTHROPIC_API_KEY")
	}
	return getenv("OPENAI_API_KEY")
}

// redactor removes the key from a provider's message.
func redactor(key string) func(string) string {
	if len(key) < 4 {
		return nil
	}
	return func(s string) string { return strings.ReplaceAll(s, key, "[redacted]") }
}

// Test hook: STEPGATE_AGENT_PAUSE names a point of the loop (before-request,
// after-response, after-turn, after-step) and, after a colon, which time it
// is met (default the first); there the process writes
// STEPGATE_AGENT_PAUSE_FILE and stops until it is killed or interrupted.
// The crash-and-resume tests kill it there.
const (
	envAgentPause     = "STEPGATE_AGENT_PAUSE"
	envAgentPauseFile = "STEPGATE_AGENT_PAUSE_FILE"
)

// pauseHook is the test hook the environment asks for, or nil.
func pauseHook(getenv func(string) string) func(context.Context, string) {
	spec, file := getenv(envAgentPause), getenv(envAgentPauseFile)
	if spec == "" || file == "" {
		return nil
	}
	point, nth, _ := strings.Cut(spec, ":")
	want := 1
	if nth != "" {
		if n, err := strconv.Atoi(nth); err == nil && n > 0 {
			want = n
		}
	}
	met := 0
	return func(ctx context.Context, p string) {
		if p != point {
			return
		}
		if met++; met != want {
			return
		}
		_ = os.WriteFile(file, []byte(p+"\n"), 0o600)
		<-ctx.Done()
	}
}

// keyFor is the provider's key, or errNoKey when the provider's own
// endpoint (no --base-url) needs one and the environment has none.
func keyFor(provider, baseURL string, getenv func(string) string) (string, error) {
	key := apiKey(provider, getenv)
	if key == "" && baseURL == "" {
		name := "OPENAI_API_KEY"
		if provider == "anthropic" {
			name = "ANTHROPIC_API_KEY"
		}
		return "", fmt.Errorf("engine agent --provider %s: set %s (or give --base-url for a local server): %w", provider, name, errNoKey)
	}
	return key, nil
}
