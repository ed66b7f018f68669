package builtin_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor/builtin"
)

func TestSkill(t *testing.T) {
	tool, err := builtin.Skill()
	if err != nil {
		t.Fatal(err)
	}
	loc, outside := t.TempDir(), t.TempDir()
	files := map[string]string{
		".stepgate/skills/release/SKILL.md":         "---\nname: release\n---\nTag, then publish.\n",
		".stepgate/skills/release/scripts/check.sh": "#!/bin/sh\n",
		".agents/skills/release/SKILL.md":           "shadowed by .stepgate\n",
		".agents/skills/review/SKILL.md":            "Read the diff twice.\n",
		".agents/skills/notes/README.md":            "no SKILL.md: not a skill\n",
	}
	writeTree(t, loc, files)
	if err := os.WriteFile(filepath.Join(outside, "SKILL.md"), []byte("outside the workspace"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(loc, ".agents/skills/escape")); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name, want string
		isError    bool
	}{
		{"release", "<skill name=\"release\" dir=\".stepgate/skills/release\">\n---\nname: release\n---\nTag, then publish.\n\nFiles:\n- .stepgate/skills/release/scripts/check.sh\n</skill>", false},
		{"review", "<skill name=\"review\" dir=\".agents/skills/review\">\nRead the diff twice.\n</skill>", false},
		{"deploy", `unknown skill "deploy"; available: release, review`, true},
		// A symlink out of the workspace is refused, not followed.
		{"escape", "read skill escape: openat .agents/skills/escape/SKILL.md: path escapes from parent", true},
	}
	for _, tt := range tests {
		p, err := prepare(t, tool, loc, builtin.SkillInput{Name: tt.name})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if diff := cmp.Diff([]descriptor.Request{{Action: "skill", Resources: []string{tt.name}, Save: []string{tt.name}}}, p.Requests()); diff != "" {
			t.Errorf("%s: requests (-want +got):\n%s", tt.name, diff)
		}
		res := p.Run(context.Background())
		if diff := cmp.Diff(tt.want, res.Text()); diff != "" || res.IsError != tt.isError {
			t.Errorf("skill %s (error %v) (-want +got):\n%s", tt.name, res.IsError, diff)
		}
	}
	for _, name := range []string{"", "..", "a/b", `a\b`} {
		if _, err := prepare(t, tool, loc, builtin.SkillInput{Name: name}); err == nil {
			t.Errorf("skill name %q was accepted", name)
		}
	}
	empty, err := prepare(t, tool, t.TempDir(), builtin.SkillInput{Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := empty.Run(context.Background()).Text(), `unknown skill "x": there are no skills (none of .stepgate/skills, .agents/skills holds NAME/SKILL.md)`; got != want {
		t.Errorf("no skills: %q, want %q", got, want)
	}
}

// A hostile skill answers at once: a SKILL.md that is a named pipe (whose
// other end is never opened) is refused as not a regular file, one of
// 600 MB (sparse) as too large, unread; a skills directory that is a named
// pipe is not a directory.
func TestSkillRefusesHostileFiles(t *testing.T) {
	tool, err := builtin.Skill()
	if err != nil {
		t.Fatal(err)
	}
	loc := t.TempDir()
	writeTree(t, loc, map[string]string{".stepgate/skills/big/SKILL.md": ""})
	if err := os.Truncate(filepath.Join(loc, ".stepgate/skills/big/SKILL.md"), 600<<20); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(loc, ".stepgate/skills/pipe"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(loc, ".agents"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".stepgate/skills/pipe/SKILL.md", ".agents/skills"} {
		if err := syscall.Mkfifo(filepath.Join(loc, p), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct{ name, want string }{
		{"pipe", "read skill pipe: .stepgate/skills/pipe/SKILL.md: not a regular file"},
		{"big", "read skill big: .stepgate/skills/big/SKILL.md is larger than 10485760 bytes, the most a skill's SKILL.md may hold"},
		{"none", "read skill none: openat .agents/skills/none/SKILL.md: not a directory"},
	} {
		p, err := prepare(t, tool, loc, builtin.SkillInput{Name: tt.name})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			if res := p.Run(context.Background()); !res.IsError || res.Text() != tt.want {
				t.Errorf("skill %s = %q, want the error %q", tt.name, res.Text(), tt.want)
			}
		}()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatalf("skill %s did not return: it is blocked", tt.name)
		}
	}
}
