package integration

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Through `engine mcp serve`, under the user's "git *": allow and a deny
// of edits to secret/*: git clone --config core.sshCommand=… gets a ticket
// showing the whole command, which always asks, and runs nothing; a
// redirection through /proc/self/cwd into secret/ is refused and leaves
// the file as it was.
func TestMCPServeGitOptionsAndProcessPaths(t *testing.T) {
	xdg := t.TempDir()
	user := "agents:\n  build:\n    permission:\n      \"*\": allow\n      bash: { \"*\": ask, \"git *\": allow, \"ls\": allow, \"ls *\": allow }\n      edit: { \"*\": allow, \"secret/*\": deny }\n"
	if err := os.MkdirAll(filepath.Join(xdg, "stepgate"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(xdg, "stepgate", "config.yaml"), []byte(user), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CONFIG_HOME", xdg)
	loc := t.TempDir()
	if err := os.MkdirAll(filepath.Join(loc, "secret"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(loc, "secret", "key"), []byte("original\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	s := &gwSetup{url: "nats://" + addr, loc: loc, srv: serve(t, t.TempDir(), addr)}

	proc, _ := s.goClient(t, nil, "--wait", "500ms", "--session", "proc")
	res := gwCall(t, proc, "bash", map[string]any{"command": "ls > /proc/self/cwd/secret/key"})
	if !res.IsError || !strings.Contains(gwText(res), `"secret/*"`) {
		t.Errorf("ls > /proc/self/cwd/secret/key: isError=%v %q, want the deny of secret/* named", res.IsError, gwText(res))
	}
	if b, err := os.ReadFile(filepath.Join(loc, "secret", "key")); err != nil || string(b) != "original\n" {
		t.Errorf("secret/key holds %q (%v)", b, err)
	}

	marker := filepath.Join(loc, "marker")
	cmd := "git clone --config core.sshCommand='touch " + marker + " #' ssh://example.invalid/r d"
	git, _ := s.goClient(t, nil, "--wait", "500ms", "--session", "git")
	res = gwCall(t, git, "bash", map[string]any{"command": cmd})
	tk := s.awaitTicket(t, "bash")
	if !res.IsError || !strings.Contains(gwText(res), tk.ID) {
		t.Errorf("git clone --config: isError=%v %q, want the ticket %s named", res.IsError, gwText(res), tk.ID)
	}
	whole := false
	for _, r := range tk.Requests {
		whole = whole || r.Ask && slices.Equal(r.Resources, []string{cmd})
	}
	if !whole {
		t.Errorf("ticket %s asks %+v, want the whole text, always asking", tk.ID, tk.Requests)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("core.sshCommand ran without an approval")
	}
}
