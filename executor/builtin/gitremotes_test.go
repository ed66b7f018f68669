package builtin

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A remote is found in the repository's own config, from a subdirectory
// and from a linked worktree (through commondir); a section of another
// kind, another remote, a config that is a FIFO (read without waiting) or
// no repository at all finds none.
func TestGitRemoteConfigured(t *testing.T) {
	root := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("repo/.git/config", "[core]\n\tbare = false\n[Remote \"origin\"]\n\turl = https://h/r\n[branch \"fake\"]\n\tremote = origin\n")
	write("repo/.git/worktrees/w/commondir", "../..\n")
	write("wt/.git", "gitdir: ../repo/.git/worktrees/w\n")
	if err := os.MkdirAll(filepath.Join(root, "repo", "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "fifo", ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "fifo", ".git", "config"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		dir, name string
		want      bool
	}{
		{"repo", "origin", true},
		{"repo/sub", "origin", true},
		{"wt", "origin", true},
		{"repo", "fake", false},
		{"repo", "upstream", false},
		{"fifo", "origin", false},
		{".", "origin", false},
	} {
		if got := gitRemoteConfigured(filepath.Join(root, tt.dir), tt.name); got != tt.want {
			t.Errorf("%s %s: %v, want %v", tt.dir, tt.name, got, tt.want)
		}
	}
}
