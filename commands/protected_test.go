package commands_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/builtin"
	"github.com/stepgate/stepgate/step/steptest"
)

// userAllowsEdits is a user file under which the build agent edits without
// asking and every bash command asks.
const userAllowsEdits = "agents:\n  build:\n    permission:\n      edit: allow\n      bash: ask\n"

// protectedLoc is a location with a git directory, a hook, a project file
// and a source file, all holding "x = 1".
func protectedLoc(t *testing.T) string {
	t.Helper()
	loc := t.TempDir()
	for _, d := range []string{".git/hooks", ".stepgate", "src"} {
		if err := os.MkdirAll(filepath.Join(loc, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{".git/config", ".git/hooks/pre-commit", "src/a.go"} {
		writeAt(t, loc, f, "x = 1\n")
	}
	writeAt(t, loc, ".stepgate/config.yaml", "# x = 1\nagents: {}\n")
	if err := os.Symlink(".git", filepath.Join(loc, "lnk")); err != nil {
		t.Fatal(err)
	}
	return loc
}

func writeAt(t *testing.T, loc, rel, s string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(loc, rel), []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readAt(t *testing.T, loc, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(loc, rel))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

// redirectTool stands for bash once its output redirections are edit
// requests: an allowed command and an edit of the target.
func redirectTool(t testing.TB) *executor.Tool {
	type in struct {
		Target string `json:"target"`
	}
	tool, err := executor.New("redirect_fx", "Writes x to a file, as `echo x > target` would.",
		func(_ context.Context, c executor.Call, in in) (string, error) {
			return "wrote", os.WriteFile(filepath.Join(c.Location, in.Target), []byte("x\n"), 0o644)
		}, executor.WithEffect(descriptor.SideEffecting),
		executor.WithRequests(func(c executor.Call, in in) ([]descriptor.Request, error) {
			p, err := executor.Resolve(c.Location, in.Target, false)
			if err != nil {
				return nil, err
			}
			return []descriptor.Request{{Action: "redirect_fx", Resources: []string{"echo x"}, Save: []string{"echo x"}},
				{Action: "edit", Resources: []string{p.Resource()}, Save: []string{"*"}}}, nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// loaderHost starts a host that reads the configuration from files: the
// built-in agents, the user's file userText, the location's project file.
func loaderHost(t *testing.T, s *steptest.Server, userText string) (*commands.Host, *logBuffer) {
	t.Helper()
	user := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(user, []byte(userText), 0o600); err != nil {
		t.Fatal(err)
	}
	tools := withTestTools(t)
	reg, err := executor.NewRegistry(append(tools, redirectTool(t))...)
	if err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	h := startHostCfg(t, s, reg, commands.Config{Host: "h1", Logger: log,
		Policy: commands.LoaderPolicy(config.Loader{UserFile: user}, log)})
	return h, logs
}

// logBuffer collects a host's log lines.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func patch(ops ...string) builtin.ApplyPatchInput {
	return builtin.ApplyPatchInput{PatchText: "*** Begin Patch\n" + strings.Join(ops, "\n") + "\n*** End Patch"}
}

func update(path string) string { return "*** Update File: " + path + "\n-x = 1\n+x = 2" }

// protectedCalls are writes of every tool to every protected path, and the
// files they would change.
func protectedCalls() []struct {
	why   string
	call  commands.CallRequest
	files []string
} {
	w := func(p string) commands.CallRequest {
		return call("c", "write", builtin.WriteInput{Path: p, Content: "bash: allow\n"})
	}
	e := func(p string) commands.CallRequest {
		return call("c", "edit", builtin.EditInput{Path: p, OldString: "x = 1", NewString: "x = 2"})
	}
	return []struct {
		why   string
		call  commands.CallRequest
		files []string
	}{
		{"write the project file", w(".stepgate/config.yaml"), []string{".stepgate/config.yaml"}},
		{"write a new file beside it", w(".stepgate/other.yaml"), []string{".stepgate/other.yaml"}},
		{"write .git/config", w(".git/config"), []string{".git/config"}},
		{"write a hook", w(".git/hooks/pre-commit"), []string{".git/hooks/pre-commit"}},
		{"write a new hook", w(".git/hooks/post-checkout"), []string{".git/hooks/post-checkout"}},
		{"write a .git file", w("src/.git"), []string{"src/.git"}},
		{"write through ./ and ..", w("./.stepgate/../.stepgate/config.yaml"), []string{".stepgate/config.yaml"}},
		{"write .git/config through a symlink", w("lnk/config"), []string{".git/config"}},
		{"write .git/config by its absolute path", w("$LOC/.git/config"), []string{".git/config"}},
		{"write another repository's .git/config outside the location (the temporary directory is allowed)", w("$EXT/.git/config"), nil},
		{"write .Git/Config (a case-insensitive file system's .git/config)", w(".Git/Config"), []string{".Git/Config"}},
		{"edit the project file", e(".stepgate/config.yaml"), []string{".stepgate/config.yaml"}},
		{"edit .git/config", e(".git/config"), []string{".git/config"}},
		{"edit a hook through a symlink", e("lnk/hooks/pre-commit"), []string{".git/hooks/pre-commit"}},
		{"patch .git/config", call("c", "apply_patch", patch(update(".git/config"))), []string{".git/config"}},
		{"patch a plain file and a hook", call("c", "apply_patch", patch(update("src/a.go"), update(".git/hooks/pre-commit"))), []string{"src/a.go", ".git/hooks/pre-commit"}},
		{"patch: add a hook", call("c", "apply_patch", patch("*** Add File: .git/hooks/pre-push\n+#!/bin/sh")), []string{".git/hooks/pre-push"}},
		{"patch: delete the project file", call("c", "apply_patch", patch("*** Delete File: .stepgate/config.yaml")), []string{".stepgate/config.yaml"}},
		{"patch: move a plain file onto a hook", call("c", "apply_patch", patch("*** Update File: src/a.go\n*** Move to: .git/hooks/pre-commit\n-x = 1\n+x = 2")), []string{"src/a.go", ".git/hooks/pre-commit"}},
		{"patch: move a hook away", call("c", "apply_patch", patch("*** Update File: .git/hooks/pre-commit\n*** Move to: src/hook.sh")), []string{".git/hooks/pre-commit", "src/hook.sh"}},
		{"an output redirection into .git/config", call("c", "redirect_fx", map[string]string{"target": ".git/config"}), []string{".git/config"}},
	}
}

// Under edit: allow, every tool's write to a protected path asks, names the
// protection, and changes nothing until a human answers; a plain file is
// written without asking.
func TestProtectedPathsAskUnderEditAllow(t *testing.T) {
	s := steptest.Start(t, "")
	h, _ := loaderHost(t, s, userAllowsEdits+"      redirect_fx: allow\n")
	ctx := ctxT(t)
	for _, tc := range protectedCalls() {
		t.Run(tc.why, func(t *testing.T) {
			loc := protectedLoc(t)
			ext := t.TempDir()
			tc.call.Args = []byte(strings.NewReplacer("$LOC", loc, "$EXT", ext).Replace(string(tc.call.Args)))
			defer func() {
				if got := readAt(t, ext, ".git/config"); got != "" {
					t.Errorf("the other repository's .git/config was written: %q", got)
				}
			}()
			before := map[string]string{}
			for _, f := range tc.files {
				before[f] = readAt(t, loc, f)
			}
			info, err := h.StartRun(ctx, commands.StartRunRequest{Location: loc})
			if err != nil {
				t.Fatal(err)
			}
			out, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: []commands.CallRequest{tc.call}})
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Tickets) != 1 {
				t.Fatalf("%d tickets (results %+v), want the write to ask", len(out.Tickets), out.Results)
			}
			tk := out.Tickets[0]
			protected := slices.IndexFunc(tk.Requests, func(r events.Request) bool { return r.Action == "edit" && r.Ask && len(r.Save) == 0 })
			if protected < 0 {
				t.Errorf("ticket requests %+v: none asks for the protected path and saves nothing", tk.Requests)
			}
			views, err := tickets(ctx, h, commands.TicketsRequest{Run: info.Run})
			if err != nil || len(views) != 1 || !strings.Contains(views[0].Reason, "(protected path)") {
				t.Errorf("the operator's view %+v (%v) does not say the path is protected", views, err)
			}
			for _, f := range tc.files {
				if got := readAt(t, loc, f); got != before[f] {
					t.Errorf("%s changed before an answer: %q", f, got)
				}
			}
		})
	}
	t.Run("a plain file is written without asking", func(t *testing.T) {
		loc := protectedLoc(t)
		info, err := h.StartRun(ctx, commands.StartRunRequest{Location: loc})
		if err != nil {
			t.Fatal(err)
		}
		out, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: []commands.CallRequest{
			call("c", "write", builtin.WriteInput{Path: "src/b.go", Content: "package b\n"})}})
		if err != nil || !out.Final || out.Results[0].IsError {
			t.Fatalf("write src/b.go: %+v, %v; want it written", out, err)
		}
	})
}

// The real bash tool under bash: allow and edit: allow: a redirection into
// a protected path asks (the write tool's protected request, saving
// nothing) and writes nothing until a human answers; a redirection into a
// plain file runs.
func TestBashRedirectionIntoAProtectedPathAsks(t *testing.T) {
	s := steptest.Start(t, "")
	h, _ := loaderHost(t, s, "agents:\n  build:\n    permission:\n      edit: allow\n      bash: allow\n")
	ctx := ctxT(t)
	for _, tc := range []struct {
		why, command, file string
		asks               bool
	}{
		{"a hook", "echo evil > .git/hooks/pre-commit", ".git/hooks/pre-commit", true},
		{"git's config, appended", "echo '[alias] st = !rm -rf x' >> .git/config", ".git/config", true},
		{"the project file through &>", "echo 'bash: allow' &> .stepgate/config.yaml", ".stepgate/config.yaml", true},
		{"a plain file", "echo ok > src/a.go", "src/a.go", false},
	} {
		t.Run(tc.why, func(t *testing.T) {
			loc := protectedLoc(t)
			before := readAt(t, loc, tc.file)
			info, err := h.StartRun(ctx, commands.StartRunRequest{Location: loc})
			if err != nil {
				t.Fatal(err)
			}
			out, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1,
				Calls: []commands.CallRequest{call("c", "bash", builtin.BashInput{Command: tc.command})}})
			if err != nil {
				t.Fatal(err)
			}
			if !tc.asks {
				if !out.Final || out.Results[0].IsError || readAt(t, loc, tc.file) != "ok\n" {
					t.Fatalf("%s: %+v; want it run without asking", tc.command, out)
				}
				return
			}
			if len(out.Tickets) != 1 {
				t.Fatalf("%s: %d tickets (results %+v), want it to ask", tc.command, len(out.Tickets), out.Results)
			}
			if !slices.ContainsFunc(out.Tickets[0].Requests, func(r events.Request) bool { return r.Action == "edit" && r.Ask && len(r.Save) == 0 }) {
				t.Errorf("ticket requests %+v: none asks for the protected path and saves nothing", out.Tickets[0].Requests)
			}
			if got := readAt(t, loc, tc.file); got != before {
				t.Errorf("%s changed before an answer: %q", tc.file, got)
			}
		})
	}
}
