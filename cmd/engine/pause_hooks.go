package main

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
)

// Test hooks: STEPGATE_AGENT_PAUSE names a point of engine agent's loop
// (before-request, after-response, after-turn, after-step), and
// STEPGATE_HOST_PAUSE a point of engine serve's steps (turn-landed,
// decided, reply-waits: see commands.Config.Pause), each, after a
// colon, with which time it is met (default the first); there the process
// writes the file its _FILE variable names and stops until it is killed
// or interrupted. The crash-and-resume tests kill it there.
const (
	envAgentPause     = "STEPGATE_AGENT_PAUSE"
	envAgentPauseFile = "STEPGATE_AGENT_PAUSE_FILE"
	envHostPause      = "STEPGATE_HOST_PAUSE"
	envHostPauseFile  = "STEPGATE_HOST_PAUSE_FILE"
)

// pauseHook is the agent's test hook the environment asks for, or nil.
func pauseHook(getenv func(string) string) func(context.Context, string) {
	return pauseAt(getenv(envAgentPause), getenv(envAgentPauseFile))
}

// hostPauseHook is the served engine's test hook the environment asks
// for, or nil.
func hostPauseHook(getenv func(string) string) func(context.Context, string) {
	return pauseAt(getenv(envHostPause), getenv(envHostPauseFile))
}

// pauseAt stops at the point spec names (point[:n]), writing file first;
// nil when either is empty.
func pauseAt(spec, file string) func(context.Context, string) {
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
	var met atomic.Int64 // a host meets its points from many requests at once
	return func(ctx context.Context, p string) {
		if p != point || met.Add(1) != int64(want) {
			return
		}
		_ = os.WriteFile(file, []byte(p+"\n"), 0o600)
		<-ctx.Done()
	}
}
