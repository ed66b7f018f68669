package builtin_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/builtin"
	"github.com/stepgate/stepgate/executor/sandbox"
)

// fileTree is a real tree for the file tools under a sandbox policy: a
// home with a denied ~/.ssh, a location holding a denied directory, a
// symlink into it and a read-only .git/config, an extra writable root and
// a directory outside everything.
type fileTree struct {
	home, loc, ssh, secrets, writable, outside string
}

func newFileTree(t *testing.T) fileTree {
	t.Helper()
	real := func(p string) string {
		r, err := filepath.EvalSymlinks(p)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	home := real(t.TempDir())
	ft := fileTree{
		home: home, loc: filepath.Join(home, "proj"), ssh: filepath.Join(home, ".ssh"),
		writable: real(t.TempDir()), outside: real(t.TempDir()),
	}
	ft.secrets = filepath.Join(ft.loc, "secrets")
	writeTree(t, home, map[string]string{
		".ssh/id_ed25519":  "SECRET ssh key\n",
		"proj/secrets/key": "SECRET token\n",
		"proj/.git/config": "[core]\n",
		"proj/src/a.go":    "package a // not SECRET-free\n",
	})
	writeTree(t, ft.outside, map[string]string{"out.txt": "outside\n"})
	if err := os.Symlink(ft.secrets, filepath.Join(ft.loc, "link")); err != nil {
		t.Fatal(err)
	}
	return ft
}

// policy is the workspace-write policy of the tree (mode may change it).
func (ft fileTree) policy(mode sandbox.Mode) *sandbox.Policy {
	return &sandbox.Policy{
		Mode: mode, Location: ft.loc, Writable: []string{ft.writable},
		ReadOnly: []string{filepath.Join(ft.loc, ".git", "config")},
		Denied:   []string{ft.ssh, ft.secrets},
	}
}

// runUnder prepares a call as the engine does (no policy yet), contains it
// in pol (nil: none) and runs it.
func runUnder(t *testing.T, tool *executor.Tool, loc string, pol *sandbox.Policy, in any) executor.Result {
	t.Helper()
	args, _ := json.Marshal(in)
	p, err := tool.Prepare(executor.Call{Location: loc}, args)
	if err != nil {
		t.Fatal(err)
	}
	p.Contain(pol, nil)
	return p.Run(context.Background())
}

func mustTool(t *testing.T, build func() (*executor.Tool, error)) *executor.Tool {
	t.Helper()
	tool, err := build()
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// TestFileToolsObeySandbox: each file tool does what it asks without a
// policy (the positive control) and, under the policy, is refused with the
// exact message, leaving the file as it was.
func TestFileToolsObeySandbox(t *testing.T) {
	patch := func(body string) builtin.ApplyPatchInput {
		return builtin.ApplyPatchInput{PatchText: "*** Begin Patch\n" + body + "*** End Patch"}
	}
	for _, tc := range []struct {
		name  string
		tool  func() (*executor.Tool, error)
		in    func(ft fileTree) any
		mode  sandbox.Mode
		works func(ft fileTree) string // a part of the text, or the file written, without a policy
		want  func(ft fileTree) string // the refusal under the policy
	}{
		{"read a denied file outside", builtin.Read,
			func(ft fileTree) any { return builtin.ReadInput{Path: filepath.Join(ft.ssh, "id_ed25519")} }, sandbox.WorkspaceWrite,
			func(fileTree) string { return "SECRET ssh key" },
			func(ft fileTree) string {
				return "sandbox_denied: the sandbox denies reading " + filepath.Join(ft.ssh, "id_ed25519") + " (denied path " + ft.ssh + ")"
			}},
		{"read a denied file inside", builtin.Read,
			func(fileTree) any { return builtin.ReadInput{Path: "secrets/key"} }, sandbox.ReadOnly,
			func(fileTree) string { return "SECRET token" },
			func(ft fileTree) string {
				return "sandbox_denied: the sandbox denies reading " + filepath.Join(ft.secrets, "key") + " (denied path " + ft.secrets + ")"
			}},
		{"read_file through a symlink into a denied dir", builtin.ReadFile,
			func(fileTree) any { return builtin.ReadFileInput{Path: "link/key"} }, sandbox.WorkspaceWrite,
			func(fileTree) string { return "SECRET token" },
			func(ft fileTree) string {
				return "sandbox_denied: the sandbox denies reading " + filepath.Join(ft.secrets, "key") + " (denied path " + ft.secrets + ")"
			}},
		{"write into a denied dir", builtin.Write,
			func(ft fileTree) any {
				return builtin.WriteInput{Path: filepath.Join(ft.ssh, "authorized_keys"), Content: "k\n"}
			}, sandbox.WorkspaceWrite,
			func(ft fileTree) string { return filepath.Join(ft.ssh, "authorized_keys") },
			func(ft fileTree) string {
				return "sandbox_denied: the sandbox denies writing " + filepath.Join(ft.ssh, "authorized_keys") + " (denied path " + ft.ssh + ")"
			}},
		{"write a read-only file inside the location", builtin.Write,
			func(fileTree) any { return builtin.WriteInput{Path: ".git/config", Content: "[core]\nhooksPath=x\n"} }, sandbox.WorkspaceWrite,
			func(ft fileTree) string { return filepath.Join(ft.loc, ".git", "config") },
			func(ft fileTree) string {
				p := filepath.Join(ft.loc, ".git", "config")
				return "sandbox_denied: the sandbox denies writing " + p + " (read-only path " + p + ")"
			}},
		{"edit a read-only file inside the location", builtin.Edit,
			func(fileTree) any {
				return builtin.EditInput{Path: ".git/config", OldString: "[core]", NewString: "[core]\nhooksPath=x"}
			}, sandbox.WorkspaceWrite,
			func(ft fileTree) string { return filepath.Join(ft.loc, ".git", "config") },
			func(ft fileTree) string {
				p := filepath.Join(ft.loc, ".git", "config")
				return "sandbox_denied: the sandbox denies writing " + p + " (read-only path " + p + ")"
			}},
		{"write outside the writable roots", builtin.Write,
			func(ft fileTree) any {
				return builtin.WriteInput{Path: filepath.Join(ft.outside, "x.txt"), Content: "x\n"}
			}, sandbox.WorkspaceWrite,
			func(ft fileTree) string { return filepath.Join(ft.outside, "x.txt") },
			func(ft fileTree) string {
				return "sandbox_denied: the sandbox denies writing " + filepath.Join(ft.outside, "x.txt") + " (outside the location and the writable roots)"
			}},
		{"edit outside the writable roots", builtin.Edit,
			func(ft fileTree) any {
				return builtin.EditInput{Path: filepath.Join(ft.outside, "out.txt"), OldString: "outside", NewString: "changed"}
			}, sandbox.WorkspaceWrite,
			func(ft fileTree) string { return filepath.Join(ft.outside, "out.txt") },
			func(ft fileTree) string {
				return "sandbox_denied: the sandbox denies writing " + filepath.Join(ft.outside, "out.txt") + " (outside the location and the writable roots)"
			}},
		{"apply_patch adds a file outside", builtin.ApplyPatch,
			func(ft fileTree) any { return patch("*** Add File: " + filepath.Join(ft.outside, "p.txt") + "\n+p\n") }, sandbox.WorkspaceWrite,
			func(ft fileTree) string { return filepath.Join(ft.outside, "p.txt") },
			func(ft fileTree) string {
				return "sandbox_denied: the sandbox denies writing " + filepath.Join(ft.outside, "p.txt") + " (outside the location and the writable roots)"
			}},
		{"apply_patch updates a read-only file", builtin.ApplyPatch,
			func(fileTree) any {
				return patch("*** Update File: .git/config\n@@\n-[core]\n+[core]\n+\thooksPath = x\n")
			}, sandbox.WorkspaceWrite,
			func(ft fileTree) string { return filepath.Join(ft.loc, ".git", "config") },
			func(ft fileTree) string {
				p := filepath.Join(ft.loc, ".git", "config")
				return "sandbox_denied: the sandbox denies writing " + p + " (read-only path " + p + ")"
			}},
		{"write inside the location under read-only", builtin.Write,
			func(fileTree) any { return builtin.WriteInput{Path: "src/b.go", Content: "package a\n"} }, sandbox.ReadOnly,
			func(ft fileTree) string { return filepath.Join(ft.loc, "src", "b.go") },
			func(ft fileTree) string {
				return "sandbox_denied: the sandbox denies writing " + filepath.Join(ft.loc, "src", "b.go") + " (profile read-only)"
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool := mustTool(t, tc.tool)
			// Positive control: with no policy the tool does it.
			ft := newFileTree(t)
			res := runUnder(t, tool, ft.loc, nil, tc.in(ft))
			if res.IsError {
				t.Fatalf("without a policy: %s", res.Text())
			}
			if w := tc.works(ft); filepath.IsAbs(w) {
				if _, err := os.Stat(w); err != nil {
					t.Fatalf("without a policy the tool did not write %s: %v (%s)", w, err, res.Text())
				}
			} else if !strings.Contains(res.Text(), w) {
				t.Fatalf("without a policy: %q lacks %q", res.Text(), w)
			}
			// Under the policy, on a fresh tree: refused, nothing changed.
			ft = newFileTree(t)
			var before []byte
			w := tc.works(ft)
			if filepath.IsAbs(w) {
				before, _ = os.ReadFile(w)
			}
			res = runUnder(t, tool, ft.loc, ft.policy(tc.mode), tc.in(ft))
			if !res.IsError || !strings.Contains(res.Text(), tc.want(ft)) {
				t.Fatalf("under %s: got %q (error %v), want %q", tc.mode, res.Text(), res.IsError, tc.want(ft))
			}
			if filepath.IsAbs(w) {
				if after, _ := os.ReadFile(w); string(after) != string(before) {
					t.Fatalf("refused, yet %s changed: %q → %q", w, before, after)
				}
			}
			t.Logf("refused: %s", res.Text())
		})
	}
}

// TestFileToolsWriteWritableRoots: under workspace-write the location and
// the writable roots stay writable (what is not refused still works).
func TestFileToolsWriteWritableRoots(t *testing.T) {
	ft := newFileTree(t)
	tool := mustTool(t, builtin.Write)
	for _, p := range []string{"src/b.go", filepath.Join(ft.writable, "w.txt")} {
		if res := runUnder(t, tool, ft.loc, ft.policy(sandbox.WorkspaceWrite), builtin.WriteInput{Path: p, Content: "ok\n"}); res.IsError {
			t.Fatalf("write %s: %s", p, res.Text())
		}
	}
	for _, p := range []string{filepath.Join(ft.loc, "src", "b.go"), filepath.Join(ft.writable, "w.txt")} {
		if b, err := os.ReadFile(p); err != nil || string(b) != "ok\n" {
			t.Fatalf("%s: %q %v", p, b, err)
		}
	}
	// os.TempDir() is not the sandbox's private /tmp for the file tools.
	tmp := filepath.Join(os.TempDir(), "stepgate-sandboxfiles-"+filepath.Base(ft.home))
	res := runUnder(t, tool, ft.loc, ft.policy(sandbox.WorkspaceWrite), builtin.WriteInput{Path: tmp, Content: "x"})
	if !res.IsError || !strings.Contains(res.Text(), "(outside the location and the writable roots)") {
		os.Remove(tmp)
		t.Fatalf("write to %s: %q", tmp, res.Text())
	}
}

// TestSearchesHideDenied: glob and grep list and read a denied file without
// a policy, and never show it (nor what it holds) under one, whether
// reached directly or through a symlink; the other files stay found.
func TestSearchesHideDenied(t *testing.T) {
	glob, grep := mustTool(t, builtin.Glob), mustTool(t, builtin.Grep)
	for _, tc := range []struct {
		name   string
		tool   *executor.Tool
		in     func(ft fileTree) any
		hidden []string
		shown  string
	}{
		{"glob the location", glob, func(fileTree) any { return builtin.GlobInput{Pattern: "**"} },
			[]string{"secrets/key"}, "src/a.go"},
		{"glob the home", glob, func(ft fileTree) any { return builtin.GlobInput{Pattern: "**", Path: ft.home} },
			[]string{".ssh/id_ed25519", "secrets/key"}, "proj/src/a.go"},
		{"grep the location", grep, func(fileTree) any { return builtin.GrepInput{Pattern: "SECRET"} },
			[]string{"SECRET token"}, "src/a.go:1:"},
		{"grep the home", grep, func(ft fileTree) any { return builtin.GrepInput{Pattern: "SECRET", Path: ft.home} },
			[]string{"SECRET ssh key", "SECRET token"}, "proj/src/a.go:1:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ft := newFileTree(t)
			open := runUnder(t, tc.tool, ft.loc, nil, tc.in(ft)).Text()
			for _, h := range tc.hidden {
				if !strings.Contains(open, h) {
					t.Fatalf("without a policy %q lacks %q", open, h)
				}
			}
			res := runUnder(t, tc.tool, ft.loc, ft.policy(sandbox.WorkspaceWrite), tc.in(ft))
			if res.IsError || !strings.Contains(res.Text(), tc.shown) {
				t.Fatalf("under the policy: %q, want %q in it", res.Text(), tc.shown)
			}
			for _, h := range tc.hidden {
				if strings.Contains(res.Text(), h) {
					t.Fatalf("under the policy %q shows %q", res.Text(), h)
				}
			}
		})
	}
	// Searching a denied directory itself, through the symlink into it, is
	// refused outright; without a policy the search finds the secret.
	for _, tc := range []struct {
		tool *executor.Tool
		in   any
		open string
	}{
		{grep, builtin.GrepInput{Pattern: "SECRET", Path: "link"}, "SECRET token"},
		{glob, builtin.GlobInput{Pattern: "*", Path: "link"}, "key"},
	} {
		ft := newFileTree(t)
		if res := runUnder(t, tc.tool, ft.loc, nil, tc.in); res.IsError || !strings.Contains(res.Text(), tc.open) {
			t.Fatalf("%s without a policy: %q", tc.tool.Name(), res.Text())
		}
		res := runUnder(t, tc.tool, ft.loc, ft.policy(sandbox.WorkspaceWrite), tc.in)
		want := "sandbox_denied: the sandbox denies reading " + ft.secrets + " (denied path " + ft.secrets + ")"
		if !res.IsError || !strings.Contains(res.Text(), want) {
			t.Fatalf("%s link: %q, want %q", tc.tool.Name(), res.Text(), want)
		}
	}
}
