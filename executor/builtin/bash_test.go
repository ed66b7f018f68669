package builtin_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/builtin"
)

func bashCall(t *testing.T, loc string, in builtin.BashInput) (*executor.Prepared, error) {
	t.Helper()
	tool, err := builtin.Bash()
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(in)
	return tool.Prepare(executor.Call{Run: "r", Step: 1, CallID: "c", Location: loc}, args)
}

func runBash(t *testing.T, loc string, in builtin.BashInput) string {
	t.Helper()
	p, err := bashCall(t, loc, in)
	if err != nil {
		t.Fatal(err)
	}
	return p.Run(context.Background()).Text()
}

func TestBashRuns(t *testing.T) {
	loc := t.TempDir()
	if err := os.Mkdir(filepath.Join(loc, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		why  string
		in   builtin.BashInput
		want string
	}{
		{"stdout and stderr, combined, and the exit code", builtin.BashInput{Command: "echo out; echo err >&2"}, "out\nerr\n\n(exit code 0)"},
		{"a failing command's exit code", builtin.BashInput{Command: "exit 3"}, "(exit code 3)"},
		{"in the workdir", builtin.BashInput{Command: "basename \"$PWD\"", Workdir: "sub"}, "sub\n\n(exit code 0)"},
		{"an absolute path outside the workdir is a warning, not a prompt", builtin.BashInput{Command: "ls /nonexistent-dir-x 2>/dev/null; true"},
			"[warning: /nonexistent-dir-x is outside the working directory]\n(exit code 0)"},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, runBash(t, loc, tt.in)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestBashTimeoutKillsTheProcessGroup(t *testing.T) {
	loc := t.TempDir()
	marker := filepath.Join(loc, "survived")
	// The command would run for an hour: only the timeout ends it.
	got := runBash(t, loc, builtin.BashInput{Command: "(sleep 2; touch survived) & sleep 3600", Timeout: 200})
	if !strings.Contains(got, "timed out and its process group was killed") {
		t.Errorf("result %q", got)
	}
	time.Sleep(2500 * time.Millisecond)
	if _, err := os.Stat(marker); err == nil {
		t.Error("a child of the command survived the timeout")
	}
}

func TestBashCancellationKillsIt(t *testing.T) {
	p, err := bashCall(t, t.TempDir(), builtin.BashInput{Command: "sleep 3600"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	done := make(chan executor.Result, 1)
	go func() { done <- p.Run(ctx) }()
	select { // an hour's sleep: only the cancellation ends it
	case res := <-done:
		if !res.IsError || !strings.Contains(res.Text(), "cancelled") {
			t.Errorf("cancelled: %+v", res)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the command still runs 2 minutes after its call was cancelled")
	}
}

func TestBashCapturesAtMostOneMiB(t *testing.T) {
	got := runBash(t, t.TempDir(), builtin.BashInput{Command: "head -c 2000000 /dev/zero | tr '\\0' a"})
	if !strings.Contains(got, "[output capture stopped at 1048576 bytes") || strings.Count(got, "a") < 1<<20-10 || len(got) > 1<<20+300 {
		t.Errorf("capture: %d bytes, notice present: %v", len(got), strings.Contains(got, "output capture stopped"))
	}
}

func TestBashRequests(t *testing.T) {
	loc, outside := t.TempDir(), t.TempDir()
	outsideReal, _ := filepath.EvalSymlinks(outside)
	p, err := bashCall(t, loc, builtin.BashInput{Command: "git status; rm -rf x", Workdir: outside})
	if err != nil {
		t.Fatal(err)
	}
	pattern := filepath.ToSlash(outsideReal) + "/*"
	want := []descriptor.Request{
		{Action: "external_directory", Resources: []string{pattern}, Save: []string{pattern}},
		{Action: "bash", Resources: []string{"git status", "rm -rf x"}, Save: []string{"git status", "rm -rf x"}},
	}
	if diff := cmp.Diff(want, p.Requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	p, err = bashCall(t, loc, builtin.BashInput{Command: "if then ((("})
	if err != nil {
		t.Fatal(err)
	}
	if r := p.Requests(); len(r) != 1 || !r[0].Ask || r[0].Resources[0] != "if then (((" {
		t.Errorf("an unparseable command's request: %+v, want the whole text, always asking", r)
	}
	for _, bad := range []builtin.BashInput{{Command: " "}, {Command: "true", Timeout: 600001}, {Command: "true", Workdir: "../x"}} {
		if _, err := bashCall(t, loc, bad); err == nil {
			t.Errorf("%+v was accepted", bad)
		}
	}
}

// The command runs with bash, the dialect it was parsed in: what dash
// would read as two commands is one.
func TestBashRunsTheDialectItWasParsedIn(t *testing.T) {
	loc := t.TempDir()
	victim := filepath.Join(loc, "x")
	if err := os.WriteFile(victim, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	got := runBash(t, loc, builtin.BashInput{Command: `echo $'\' ; rm x # '; [[ 1 == 1 ]] && echo bash`})
	if want := "' ; rm x # \nbash\n\n(exit code 0)"; got != want {
		t.Errorf("result %q, want %q", got, want)
	}
	if _, err := os.Stat(victim); err != nil {
		t.Errorf("the file the parser saw as an argument was removed: %v", err)
	}
}

// Startup files, inherited options and exported functions change nothing.
func TestBashIgnoresTheEnvironmentsCode(t *testing.T) {
	loc := t.TempDir()
	startup := filepath.Join(loc, "startup.sh")
	if err := os.WriteFile(startup, []byte("touch sourced\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BASH_ENV", startup)
	t.Setenv("ENV", startup)
	t.Setenv("SHELLOPTS", "xtrace")
	t.Setenv("BASH_FUNC_ls%%", "() { echo hijacked; }")
	got := runBash(t, loc, builtin.BashInput{Command: "ls startup.sh"})
	if want := "startup.sh\n\n(exit code 0)"; got != want {
		t.Errorf("result %q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(loc, "sourced")); err == nil {
		t.Error("a startup file ran")
	}
}

// git takes any directory holding HEAD, objects/ and refs/ for a bare
// repository and obeys its config and info/attributes. A model that may
// write files (outside .git/, which is protected) and run read-only git
// must not make git run a command of its choosing that way: here the files
// of a real repository are copied into sub/ with a textconv driver for
// every file, and an allowed `git log -p` in sub/ would run it. bash runs
// git with safe.bareRepository=explicit, so it does not.
func TestBashDoesNotObeyAStrayBareRepository(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is not installed: apt-get install git")
	}
	src, loc := t.TempDir(), t.TempDir()
	gitIn := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	gitIn(src, "init", "-q")
	for _, v := range []string{"one", "two"} {
		if err := os.WriteFile(filepath.Join(src, "f"), []byte(v+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		gitIn(src, "add", "f")
		gitIn(src, "commit", "-q", "-m", v)
	}
	sub := filepath.Join(loc, "sub")
	if err := os.CopyFS(sub, os.DirFS(filepath.Join(src, ".git"))); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(loc, "textconv-ran")
	for name, body := range map[string]string{
		"config":          "[diff \"x\"]\n\ttextconv = touch " + marker + "; cat\n",
		"info/attributes": "* diff=x\n",
	} {
		if err := os.WriteFile(filepath.Join(sub, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("GIT_CONFIG_COUNT", "1") // an inherited setting is kept, and ours comes after it
	t.Setenv("GIT_CONFIG_KEY_0", "user.name")
	t.Setenv("GIT_CONFIG_VALUE_0", "inherited")
	got := runBash(t, loc, builtin.BashInput{Command: "git log -p -1", Workdir: "sub"})
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("the stray repository's textconv ran; output %q", got)
	}
	if !strings.Contains(got, "cannot use bare repository") {
		t.Errorf("git log in the stray repository: %q, want git's refusal", got)
	}
	if !strings.Contains(runBash(t, loc, builtin.BashInput{Command: "git config --get user.name"}), "inherited") {
		t.Error("the inherited GIT_CONFIG_KEY_0 was lost")
	}
}

// Without bash the call fails with a clear error, and no other shell runs it.
func TestBashWithoutBashIsAnError(t *testing.T) {
	loc := t.TempDir()
	t.Setenv("PATH", t.TempDir())
	p, err := bashCall(t, loc, builtin.BashInput{Command: "touch ran"})
	if err != nil {
		t.Fatal(err)
	}
	res := p.Run(context.Background())
	if !res.IsError || !strings.Contains(res.Text(), "bash is not installed on this host") {
		t.Errorf("result %+v, want the no-bash error", res)
	}
	if _, err := os.Stat(filepath.Join(loc, "ran")); err == nil {
		t.Error("the command ran")
	}
}
