package builtin_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/builtin"
	"github.com/stepgate/stepgate/gate"
)

// secretRules allow everything but editing secret/*.
func secretRules(t *testing.T) gate.Ruleset {
	t.Helper()
	f, err := config.Parse("config.yaml", []byte(`agents:
  build:
    permission:
      "*": allow
      edit: { "*": allow, "secret/*": deny }
`), gate.SourceUser)
	if err != nil {
		t.Fatal(err)
	}
	return f.Agents["build"]
}

// The attack: with edit denying secret/*, a redirection through
// /proc/self/cwd (which bash reads in its own working directory, the
// location) must not overwrite secret/key, whatever the engine's own
// working directory is; nor may /dev/stdin reopen a file bash read from
// for writing. Each call is run when the gate allows it, as the engine
// would.
func TestBashProcessPathsDoNotBeatADeny(t *testing.T) {
	rules := secretRules(t)
	for _, engineInLocation := range []bool{false, true} {
		for _, cmd := range []string{
			"ls > secret/key",
			"ls > /proc/self/cwd/secret/key",
			"ls > /proc/thread-self/cwd/secret/key",
			"ls > /proc/self/cwd/./secret/../secret/key",
			"ls >> /proc/self/cwd/secret/key",
			"exec < secret/key; echo gotcha > /dev/stdin",
			"cat < secret/key > /dev/stdin",
			"exec 3< secret/key; echo gotcha > /dev/fd/3",
			"exec 3< secret/key; echo gotcha > /proc/self/fd/3",
			"echo gotcha > lnk/../proc/self/cwd/secret/key",
			"echo gotcha > proclnk/cwd/secret/key",
		} {
			t.Run(fmt.Sprintf("%s/engine-in-location=%v", cmd, engineInLocation), func(t *testing.T) {
				loc := t.TempDir()
				writeTree(t, loc, map[string]string{"secret/key": "original\n"})
				if err := os.Symlink("/dev", filepath.Join(loc, "lnk")); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink("/proc/self", filepath.Join(loc, "proclnk")); err != nil {
					t.Fatal(err)
				}
				if engineInLocation {
					t.Chdir(loc)
				}
				p, err := bashCall(t, loc, bashInput(cmd))
				if err != nil {
					t.Fatal(err)
				}
				v := gate.Decide(gate.Configured, p.Requests(), rules, nil)
				if v.Kind == gate.KindAllow {
					p.Run(context.Background())
					t.Errorf("allowed; requests %+v", p.Requests())
				}
				if b, err := os.ReadFile(filepath.Join(loc, "secret/key")); err != nil || string(b) != "original\n" {
					t.Errorf("secret/key holds %q (%v)", b, err)
				}
			})
		}
	}
}

// A redirection through a process's view of the file system asks with the
// whole text, which no rule or saved approval allows, and its ticket names
// no file as the engine would resolve the path (the engine's working
// directory, its open files). /dev/null and the standard streams still ask
// nothing.
func TestBashProcessPathsAskWithTheWholeText(t *testing.T) {
	loc := t.TempDir()
	writeTree(t, loc, map[string]string{"secret/key": "original\n"})
	engine, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rules := disguiseRules(t)
	pid := fmt.Sprint(os.Getpid())
	for _, target := range []string{
		"/proc/self/cwd/secret/key", "/proc/thread-self/cwd/x", "/proc/" + pid + "/cwd/x", "/proc/1/cwd/x",
		"/proc/self/root" + loc + "/x", "/proc/" + pid + "/root/tmp/x", "/proc/self/fd/1", "/proc/self/fd/3",
		"/proc/self/mem", "/proc/self/environ", "/proc/sys/kernel/x", "/dev/fd", "/proc",
	} {
		cmd := "echo x > " + target
		p, err := bashCall(t, loc, bashInput(cmd))
		if err != nil {
			t.Fatal(err)
		}
		v := gate.Decide(gate.Configured, p.Requests(), rules, gate.Ruleset{{Action: "*", Resource: "*", Effect: gate.Allow, Source: gate.SourceSaved}})
		if v.Kind != gate.KindConfirm || !slices.ContainsFunc(v.Asked, func(r descriptor.Request) bool { return r.Ask && slices.Equal(r.Resources, []string{cmd}) }) {
			t.Errorf("%q: %s (%s), want the whole text asked; asked %+v", cmd, v.Kind, v.Reason, v.Asked)
		}
		for _, r := range p.Requests() {
			for _, res := range r.Resources {
				if strings.HasPrefix(res, engine) || strings.Contains(res, "/proc/") && res != cmd {
					t.Errorf("%q: the ticket names %q", cmd, res)
				}
			}
		}
	}
	for _, cmd := range []string{"echo x > /dev/null", "echo x 2> /dev/stderr", "echo x > /dev/stdout", "echo x > /dev/fd/2", "echo x >&2 < /dev/null", "echo x < /dev/stdin > /dev/stdout"} {
		p, err := bashCall(t, loc, bashInput(cmd))
		if err != nil {
			t.Fatal(err)
		}
		if v := gate.Decide(gate.Configured, p.Requests(), rules, nil); v.Kind != gate.KindAllow {
			t.Errorf("%q: %s (%s), want allow", cmd, v.Kind, v.Reason)
		}
	}
}

// Every tool that takes a path refuses one through /proc, /dev/fd or the
// standard streams' names (lexically or through a symlink) before any
// permission is asked: what such a path names depends on the process that
// opens it, so no ticket could name the file honestly.
func TestPathToolsRefuseProcessPaths(t *testing.T) {
	loc := t.TempDir()
	writeTree(t, loc, map[string]string{"secret/key": "original\n"})
	if err := os.Symlink("/proc/self/cwd", filepath.Join(loc, "cwdlnk")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/stdin", filepath.Join(loc, "stdin")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(loc) // the engine's view of /proc/self/cwd is the location: still refused
	rules := secretRules(t)
	pid := fmt.Sprint(os.Getpid())
	paths := []string{
		"/proc/self/cwd/secret/key", "/proc/thread-self/cwd/secret/key", "/proc/" + pid + "/cwd/secret/key",
		"/proc/self/root" + loc + "/secret/key", "/proc/self/fd/0", "/dev/fd/0", "/dev/stdin", "/dev/stdout",
		"/proc/self/environ", "/proc/cpuinfo", "/dev/./fd/../fd/0", "cwdlnk/secret/key", "stdin",
	}
	build := func(f func() (*executor.Tool, error)) *executor.Tool {
		t.Helper()
		tool, err := f()
		if err != nil {
			t.Fatal(err)
		}
		return tool
	}
	for _, path := range paths {
		for _, tt := range []struct {
			tool *executor.Tool
			in   any
		}{
			{build(builtin.Read), builtin.ReadInput{Path: path}},
			{build(builtin.ReadFile), builtin.ReadFileInput{Path: path}},
			{build(builtin.Write), builtin.WriteInput{Path: path, Content: "gotcha"}},
			{build(builtin.Edit), builtin.EditInput{Path: path, OldString: "original", NewString: "gotcha"}},
			{build(builtin.ApplyPatch), builtin.ApplyPatchInput{PatchText: "*** Begin Patch\n*** Update File: " + path + "\n-original\n+gotcha\n*** End Patch\n"}},
			{build(builtin.ApplyPatch), builtin.ApplyPatchInput{PatchText: "*** Begin Patch\n*** Add File: " + path + "\n+gotcha\n*** End Patch\n"}},
			{build(builtin.ApplyPatch), builtin.ApplyPatchInput{PatchText: "*** Begin Patch\n*** Update File: secret/key\n*** Move to: " + path + "\n-original\n+gotcha\n*** End Patch\n"}},
			{build(builtin.Glob), builtin.GlobInput{Pattern: "*", Path: path}},
			{build(builtin.Grep), builtin.GrepInput{Pattern: ".", Path: path}},
			{build(builtin.Bash), builtin.BashInput{Command: "true", Workdir: path}},
		} {
			p, err := prepare(t, tt.tool, loc, tt.in)
			if !errors.Is(err, executor.ErrProcessPath) {
				t.Errorf("%s %q: %v, want %v", tt.tool.Name(), path, err, executor.ErrProcessPath)
			}
			if err == nil && gate.Decide(gate.Configured, p.Requests(), rules, nil).Kind == gate.KindAllow {
				p.Run(context.Background()) // as the engine would: the deny of secret/* must hold
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(loc, "secret/key")); err != nil || string(b) != "original\n" {
		t.Errorf("secret/key holds %q (%v)", b, err)
	}
}
