package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/mcp"
	"github.com/stepgate/stepgate/executor/mcp/mcptest"
)

func effects(set mcp.ToolSet) map[string]descriptor.EffectClass {
	out := map[string]descriptor.EffectClass{}
	for _, d := range set.Descriptors() {
		out[d.Name] = d.Effect
	}
	return out
}

func TestStdioToolsEffectsAndResults(t *testing.T) {
	ctx := context.Background()
	calls := tempFile(t, "calls", "")
	srv := stdio(t, "test", true, mcptest.Flags{Calls: calls})
	srv.Env = map[string]string{"ONLY_THIS": "1"}
	srv.Dir = t.TempDir()
	t.Setenv("HOST_SECRET_TOKEN", "do-not-pass")
	r := start(t, srv)
	set, _ := r.await(t, 0, ready)

	want := []string{"mcp__test__big", "mcp__test__cwd", "mcp__test__danger_rm", "mcp__test__echo", "mcp__test__environ", "mcp__test__fail",
		"mcp__test__image", "mcp__test__mixed", "mcp__test__pid", "mcp__test__slow"}
	if got := names(set); !slices.Equal(got, want) {
		t.Fatalf("tools %v, want %v", got, want)
	}
	eff := effects(set)
	if eff["mcp__test__echo"] != descriptor.ReadOnly || eff["mcp__test__big"] != descriptor.ReadOnly || eff["mcp__test__danger_rm"] != descriptor.SideEffecting {
		t.Fatalf("trusted effects %v", eff)
	}
	for _, d := range set.Descriptors() {
		if d.Action != d.Name {
			t.Errorf("%s: action %q", d.Name, d.Action)
		}
	}
	if set.Scope != mcp.Scope("test", set.Descriptors()) || !strings.HasPrefix(set.Scope, "mcp-test-") || len(set.Scope) > 64 {
		t.Fatalf("scope %q", set.Scope)
	}
	if st := r.c.State(); st.Phase != mcp.Ready || st.Scope != set.Scope || len(st.Tools) != len(want) {
		t.Fatalf("state %+v", st)
	}

	if res := call(t, ctx, set, "mcp__test__echo", `{"text":"hi"}`); res.IsError || res.Text() != "hi" {
		t.Errorf("echo: %+v", res)
	}
	// Arguments are checked against the server's schema before anything is sent.
	tool := set.Tools[slices.Index(want, "mcp__test__echo")]
	if _, err := tool.Prepare(executor.Call{}, json.RawMessage(`{"text":3}`)); err == nil || !strings.HasPrefix(err.Error(), executor.InvalidInputPrefix) {
		t.Errorf("invalid echo input: %v", err)
	}
	if res := call(t, ctx, set, "mcp__test__fail", `{}`); !res.IsError || res.Text() != "it failed on purpose" {
		t.Errorf("fail: %+v", res)
	}
	img := call(t, ctx, set, "mcp__test__image", `{}`)
	if img.IsError || len(img.Parts) != 1 || img.Parts[0].Type != executor.PartMedia || img.Parts[0].MIME != "image/png" || !bytes.HasPrefix(img.Parts[0].Data, []byte("\x89PNG")) {
		t.Errorf("image: %+v", img)
	}
	mixed := call(t, ctx, set, "mcp__test__mixed", `{}`)
	wantParts := []executor.Part{
		{Type: executor.PartText, Text: "hello"},
		{Type: executor.PartMedia, MIME: "audio/wav", Data: []byte("RIFFwav")},
		{Type: executor.PartText, Text: "[resource file:///notes.txt]\nnote body"},
		{Type: executor.PartText, Text: "[resource file:///a.bin (application/zip, 3 bytes) not shown]"},
		{Type: executor.PartText, Text: "[resource link doc: https://example.invalid/doc (text/html)] the docs"},
	}
	if mixed.IsError || string(mixed.Structured) != `{"n":42}` || len(mixed.Parts) != len(wantParts) {
		t.Fatalf("mixed: %+v", mixed)
	}
	for i, p := range wantParts {
		if g := mixed.Parts[i]; g.Type != p.Type || g.Text != p.Text || g.MIME != p.MIME || !bytes.Equal(g.Data, p.Data) {
			t.Errorf("mixed part %d: %+v, want %+v", i, g, p)
		}
	}
	if big := call(t, ctx, set, "mcp__test__big", `{"kib":64}`); big.IsError || len(big.Text()) != 64*1024 {
		t.Errorf("big: %d bytes, error %v", len(big.Text()), big.IsError)
	}
	env := strings.Fields(call(t, ctx, set, "mcp__test__environ", `{}`).Text())
	if !slices.Contains(env, "ONLY_THIS") || !slices.Contains(env, "PATH") || slices.Contains(env, "HOST_SECRET_TOKEN") {
		t.Errorf("the server's environment: %v", env)
	}
	for _, name := range env {
		if name != "ONLY_THIS" && name != "PATH" && name != "HOME" {
			t.Errorf("the server's environment has %s", name)
		}
	}
	if wd := call(t, ctx, set, "mcp__test__cwd", `{}`).Text(); wd != srv.Dir {
		t.Errorf("the server runs in %s, want %s", wd, srv.Dir)
	}
	if got := readLines(t, calls); len(got) != 7 || got[0] != `echo {"text":"hi"}` {
		t.Errorf("calls file: %q", got)
	}
}

func TestUntrustedServerIsSideEffectingAndInvalidToolsAreSkipped(t *testing.T) {
	r := start(t, stdio(t, "u", false, mcptest.Flags{ToolsFile: tempFile(t, "set", "invalid")}))
	set, _ := r.await(t, 0, ready)
	for name, e := range effects(set) {
		if e != descriptor.SideEffecting {
			t.Errorf("untrusted %s: %s", name, e)
		}
	}
	if !slices.Contains(names(set), "mcp__u__dotted_name") {
		t.Errorf("sanitised tool missing: %v", names(set))
	}
	var skipped []string
	for _, s := range set.Skipped {
		skipped = append(skipped, s.Remote)
		if s.Reason == "" || strings.Contains(s.Reason, "\n") {
			t.Errorf("skipped %s: reason %q", s.Remote, s.Reason)
		}
	}
	want := []string{"bad_schema", "dup.x", "dup_x", strings.Repeat("long", 20)}
	slices.Sort(skipped)
	if !slices.Equal(skipped, want) {
		t.Fatalf("skipped %v, want %v", skipped, want)
	}
	for _, n := range names(set) {
		if strings.Contains(n, "dup") || strings.Contains(n, "bad_schema") || strings.Contains(n, "long") {
			t.Errorf("registered %s", n)
		}
	}
	if st := r.c.State(); len(st.Skipped) != len(want) {
		t.Errorf("state lists %d skipped", len(st.Skipped))
	}
}

func TestListChangedHandsOverTheNewSet(t *testing.T) {
	file := tempFile(t, "set", "v1")
	r := start(t, stdio(t, "lc", true, mcptest.Flags{ToolsFile: file}))
	first, next := r.await(t, 0, ready)
	if !slices.Contains(names(first), "mcp__lc__danger_rm") {
		t.Fatalf("v1: %v", names(first))
	}
	if err := writeFile(file, "v2"); err != nil {
		t.Fatal(err)
	}
	second, _ := r.await(t, next, func(s mcp.ToolSet) bool {
		n := names(s)
		return ready(s) && slices.Contains(n, "mcp__lc__added") && !slices.Contains(n, "mcp__lc__danger_rm")
	})
	if second.Scope == first.Scope {
		t.Fatalf("the changed list kept scope %s", first.Scope)
	}
	if res := call(t, context.Background(), second, "mcp__lc__added", `{}`); res.Text() != "added" {
		t.Fatalf("added: %+v", res)
	}
}

func TestKilledStdioServerIsUnavailableThenReconnects(t *testing.T) {
	ctx := context.Background()
	srv := stdio(t, "k", true, mcptest.Flags{})
	var broken atomic.Bool // while set, the server's command cannot start
	r := startResolve(t, "k", func(context.Context) (mcp.Server, error) {
		if broken.Load() {
			s := srv
			s.Command = []string{"/nonexistent/mcp-server"}
			return s, nil
		}
		return srv, nil
	})
	set, next := r.await(t, 0, ready)
	pid := call(t, ctx, set, "mcp__k__pid", `{}`).Text()
	var n int
	if _, err := fmt.Sscan(pid, &n); err != nil {
		t.Fatal(pid, err)
	}
	broken.Store(true)
	if err := syscall.Kill(n, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	down, next := r.await(t, next, func(s mcp.ToolSet) bool { return s.Phase == mcp.Down })
	if down.Err == nil || len(down.Tools) != 0 {
		t.Fatalf("down set %+v", down)
	}
	if st := r.c.State(); st.Phase == mcp.Ready || st.LastError == "" {
		t.Fatalf("state while down: %+v", st)
	}
	res := call(t, ctx, set, "mcp__k__echo", `{"text":"x"}`)
	if !res.IsError || !strings.HasPrefix(res.Text(), "MCP server k is unavailable: ") {
		t.Fatalf("call while down: %+v", res)
	}
	t.Logf("while down the model reads: %s", res.Text())
	broken.Store(false)
	again, _ := r.await(t, next, ready)
	if again.Scope != set.Scope {
		t.Fatalf("a reconnect to the same tools changed the scope: %s → %s", set.Scope, again.Scope)
	}
	if res := call(t, ctx, set, "mcp__k__echo", `{"text":"back"}`); res.IsError || res.Text() != "back" {
		t.Fatalf("old tools after the reconnect: %+v", res)
	}
	if p := call(t, ctx, again, "mcp__k__pid", `{}`).Text(); p == pid {
		t.Fatalf("same process %s after the kill", p)
	}
}

func TestCancellationReachesTheServer(t *testing.T) {
	calls := tempFile(t, "calls", "")
	r := start(t, stdio(t, "c", true, mcptest.Flags{Calls: calls}))
	set, _ := r.await(t, 0, ready)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	// The call would take an hour: only the cancellation ends it (a hang
	// here ends at the test's own timeout).
	res := call(t, ctx, set, "mcp__c__slow", `{"ms":3600000}`)
	if !res.IsError {
		t.Fatalf("cancelled slow call: %+v", res)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !slices.Contains(readLines(t, calls), "slow-cancelled") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := readLines(t, calls); !slices.Contains(got, "slow-cancelled") {
		t.Fatalf("the server did not see the cancellation: %q", got)
	}
}
