package commands_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/builtin"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/step/steptest"
)

// stepOne starts a run in loc on h and submits one step of c.
func stepOne(t *testing.T, h *commands.Host, loc string, rules []gate.Rule, c commands.CallRequest) *commands.StepOutcome {
	t.Helper()
	ctx := ctxT(t)
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: loc, Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	out, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: []commands.CallRequest{c}})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// wantBlocked fails unless out is the call blocked (no ticket: no human
// can approve it) by a rule whose text holds rule.
func wantBlocked(t *testing.T, out *commands.StepOutcome, rule string) {
	t.Helper()
	if len(out.Tickets) != 0 {
		t.Fatalf("the call asks (tickets %+v): a human could approve it; want it denied", out.Tickets)
	}
	if len(out.Results) != 1 || !out.Results[0].IsError || !strings.HasPrefix(out.Results[0].Content, "blocked: denied by rule") ||
		!strings.Contains(out.Results[0].Content, rule) {
		t.Fatalf("results %+v, want blocked by the rule %s", out.Results, rule)
	}
}

// userFileHost starts a host that reads the user's file at user (written
// with text first), the built-in agents and the project file.
func userFileHost(t *testing.T, s *steptest.Server, user, text string) *commands.Host {
	t.Helper()
	if err := os.WriteFile(user, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	tools := withTestTools(t)
	reg, err := executor.NewRegistry(tools...)
	if err != nil {
		t.Fatal(err)
	}
	return startHostCfg(t, s, reg, commands.Config{Host: "h1", Logger: slog.New(slog.DiscardHandler),
		Policy: commands.LoaderPolicy(config.Loader{UserFile: user}, slog.New(slog.DiscardHandler))})
}

// A user's external_directory: {"~/.ssh/*": deny} denies the model's access
// to ~/.ssh/id_rsa — before, the pattern never matched, so the access asked
// and a human could approve it — and so does a run rule naming $HOME.
func TestHomeRulesDenyThroughTheEngine(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	// The home is under the system's temporary directory, which the build
	// agent lets tools reach: move that elsewhere, so the access would ask
	// without the user's rule, as a real home's would.
	tmp := filepath.Join(t.TempDir(), "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", tmp)
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(home, ".ssh", "id_rsa")
	writeAt(t, home, ".ssh/id_rsa", "PRIVATE KEY\n")
	s := steptest.Start(t, "")
	h, _ := loaderHost(t, s, "agents:\n  build:\n    permission:\n      external_directory:\n        \"~/.ssh/*\": deny\n")
	realHome, err := filepath.EvalSymlinks(home)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		why  string
		call commands.CallRequest
	}{
		{"read the key", call("c", "read", builtin.ReadInput{Path: key})},
		{"overwrite the key", call("c", "write", builtin.WriteInput{Path: key, Content: "x"})},
		{"read the key through ..", call("c", "read", builtin.ReadInput{Path: filepath.Join(home, ".ssh", "sub", "..", "id_rsa")})},
		{"list the directory", call("c", "read", builtin.ReadInput{Path: filepath.Join(home, ".ssh")})},
	} {
		t.Run(tc.why, func(t *testing.T) {
			out := stepOne(t, h, t.TempDir(), nil, tc.call)
			wantBlocked(t, out, `external_directory "`+filepath.ToSlash(realHome)+`/.ssh/*" (user config)`)
			if got := readAt(t, home, ".ssh/id_rsa"); got != "PRIVATE KEY\n" {
				t.Errorf("the key changed: %q", got)
			}
		})
	}
	t.Run("a run rule naming $HOME", func(t *testing.T) {
		h, _ := loaderHost(t, s, "")
		out := stepOne(t, h, t.TempDir(), []gate.Rule{{Action: "external_directory", Resource: "$HOME/.ssh/*", Effect: gate.Deny}},
			call("c", "read", builtin.ReadInput{Path: key}))
		wantBlocked(t, out, `external_directory "`+filepath.ToSlash(realHome)+`/.ssh/*" (run override)`)
	})
	t.Run("a run rule naming the home when the host has none", func(t *testing.T) {
		t.Setenv("HOME", "")
		h, _ := loaderHost(t, s, "")
		_, err := h.StartRun(ctxT(t), commands.StartRunRequest{Location: t.TempDir(),
			Rules: []gate.Rule{{Action: "external_directory", Resource: "~/.ssh/*", Effect: gate.Deny}}})
		if err == nil || !strings.Contains(err.Error(), "names the home directory") {
			t.Fatalf("StartRun: %v, want the rule refused", err)
		}
	})
}

// A rule written with the location's absolute path covers the tools'
// location-relative paths: edit <location>/secrets/**: deny, then edit *:
// allow, denies every tool's write to secrets/key.md (before, the write
// was allowed) and leaves the file as it was; other files are written.
func TestAbsoluteRulesMatchInsideTheLocation(t *testing.T) {
	loc := t.TempDir()
	real, err := filepath.EvalSymlinks(loc)
	if err != nil {
		t.Fatal(err)
	}
	deny := filepath.ToSlash(real) + "/secrets/**"
	if err := os.MkdirAll(filepath.Join(loc, "secrets"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := steptest.Start(t, "")
	user := "agents:\n  build:\n    permission:\n      edit:\n        \"" + deny + "\": deny\n        \"*\": allow\n      bash: allow\n"
	h, _ := loaderHost(t, s, user)
	for _, tc := range []struct {
		why  string
		call commands.CallRequest
	}{
		{"write", call("c", "write", builtin.WriteInput{Path: "secrets/key.md", Content: "evil\n"})},
		{"write by the absolute path", call("c", "write", builtin.WriteInput{Path: filepath.Join(loc, "secrets/key.md"), Content: "evil\n"})},
		{"write through ./ and ..", call("c", "write", builtin.WriteInput{Path: "./src/../secrets/key.md", Content: "evil\n"})},
		{"edit", call("c", "edit", builtin.EditInput{Path: "secrets/key.md", OldString: "x = 1", NewString: "x = 2"})},
		{"apply_patch", call("c", "apply_patch", patch(update("secrets/key.md")))},
		{"apply_patch with a plain file first", call("c", "apply_patch", patch(update("src/a.go"), update("secrets/key.md")))},
		{"a bash redirection", call("c", "bash", builtin.BashInput{Command: "echo evil > secrets/key.md"})},
	} {
		t.Run(tc.why, func(t *testing.T) {
			writeAt(t, loc, "secrets/key.md", "x = 1\n")
			if err := os.MkdirAll(filepath.Join(loc, "src"), 0o755); err != nil {
				t.Fatal(err)
			}
			writeAt(t, loc, "src/a.go", "x = 1\n")
			out := stepOne(t, h, loc, nil, tc.call)
			wantBlocked(t, out, `edit "`+deny+`" (user config)`)
			if got := readAt(t, loc, "secrets/key.md"); got != "x = 1\n" {
				t.Errorf("secrets/key.md changed: %q", got)
			}
			if got := readAt(t, loc, "src/a.go"); got != "x = 1\n" {
				t.Errorf("src/a.go changed: %q", got)
			}
		})
	}
	t.Run("another file is written", func(t *testing.T) {
		out := stepOne(t, h, loc, nil, call("c", "write", builtin.WriteInput{Path: "notes.md", Content: "ok\n"}))
		if len(out.Results) != 1 || out.Results[0].IsError || readAt(t, loc, "notes.md") != "ok\n" {
			t.Fatalf("write notes.md: %+v, want it written", out.Results)
		}
	})
}

// A call that waits for a human keeps its paths' absolute form in its
// ticket: a deny added with the absolute path while it waits blocks it when
// the human approves.
func TestAbsoluteDenyAddedWhileATicketWaits(t *testing.T) {
	loc := t.TempDir()
	real, err := filepath.EvalSymlinks(loc)
	if err != nil {
		t.Fatal(err)
	}
	s := steptest.Start(t, "")
	user := filepath.Join(t.TempDir(), "config.yaml")
	h := userFileHost(t, s, user, "agents:\n  build:\n    permission:\n      edit: ask\n")
	out := stepOne(t, h, loc, nil, call("c", "write", builtin.WriteInput{Path: "secrets/key.md", Content: "evil\n"}))
	if len(out.Tickets) != 1 {
		t.Fatalf("results %+v: want the write to ask", out.Results)
	}
	tk := out.Tickets[0]
	if len(tk.Requests) != 1 || tk.Requests[0].Root != filepath.ToSlash(real) {
		t.Fatalf("ticket requests %+v: want the edit to name the location's root %q", tk.Requests, real)
	}
	deny := "agents:\n  build:\n    permission:\n      edit:\n        \"*\": ask\n        \"" + filepath.ToSlash(real) + "/secrets/**\": deny\n"
	if err := os.WriteFile(user, []byte(deny), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := h.Reply(ctxT(t), commands.ReplyRequest{Ticket: tk.ID, Reply: events.ReplyOnce, Principal: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Approved || res.Outcome == nil || len(res.Outcome.Results) != 1 || !strings.Contains(res.Outcome.Results[0].Content, "/secrets/**") {
		t.Fatalf("reply: %+v (outcome %+v), want the call blocked by the absolute deny", res, res.Outcome)
	}
	if got := readAt(t, loc, "secrets/key.md"); got != "" {
		t.Errorf("secrets/key.md was written: %q", got)
	}
}

// "**/" matches zero directories through the engine: edit: {"*": allow,
// "**/.env*": deny} denies writing a top-level .env (before, "**/" needed a
// directory and the write was allowed) as well as a nested one.
func TestDirectoryStarRulesCoverTheTopLevel(t *testing.T) {
	s := steptest.Start(t, "")
	h, _ := loaderHost(t, s, "agents:\n  build:\n    permission:\n      edit:\n        \"*\": allow\n        \"**/.env*\": deny\n")
	for _, p := range []string{".env", ".env.local", "config/.env"} {
		t.Run(p, func(t *testing.T) {
			loc := t.TempDir()
			out := stepOne(t, h, loc, nil, call("c", "write", builtin.WriteInput{Path: p, Content: "SECRET=1\n"}))
			wantBlocked(t, out, `edit "**/.env*" (user config)`)
			if got := readAt(t, loc, p); got != "" {
				t.Errorf("%s was written: %q", p, got)
			}
		})
	}
}
