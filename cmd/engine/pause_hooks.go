package main

import (
	"context"
	"os"
	"strconv"
	"strings"
)

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
