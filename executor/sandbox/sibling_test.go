//go:build linux

package sandbox

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSiblingHelper: the default helper is the executable stepgate-sandbox
// next to the engine, and only that: none there, or one that is not an
// executable regular file, or one its group or others may change, leaves
// the engine re-executing itself. (A helper of another owner is refused
// too; this test, run by one user, cannot make one.)
func TestSiblingHelper(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "engine")
	helper := filepath.Join(dir, HelperName)
	if err := os.WriteFile(self, []byte("#!/bin/false\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := siblingHelper(self); got != "" {
		t.Fatalf("no helper beside the engine: got %q", got)
	}
	if err := os.Mkdir(helper, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := siblingHelper(self); got != "" {
		t.Fatalf("a directory named %s: got %q", HelperName, got)
	}
	if err := os.Remove(helper); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(helper, []byte("#!/bin/false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := siblingHelper(self); got != "" {
		t.Fatalf("a helper that is not executable: got %q", got)
	}
	if err := os.Chmod(helper, 0o775); err != nil {
		t.Fatal(err)
	}
	if got := siblingHelper(self); got != "" {
		t.Fatalf("a helper its group may change: got %q", got)
	}
	if err := os.Chmod(helper, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := siblingHelper(self); got != helper {
		t.Fatalf("an executable helper beside the engine: got %q, want %q", got, helper)
	}
}

// TestStaleHelperFailsClosed: a helper given a spec with a field it does
// not know (an older stepgate-sandbox beside a newer engine, which would
// otherwise drop, say, a denied path) refuses it before doing anything.
// The spec has no command, so the helper stops either way: without the
// check it would fail for want of a command, not name the unknown field.
func TestStaleHelperFailsClosed(t *testing.T) {
	// /proc/self/exe, not os.Executable(): as an unprivileged user the test
	// binary's directory (the go command's, root's) may not be searchable.
	const self = "/proc/self/exe"
	repR, repW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	specR, specW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command(self)
	c.Args = []string{stage1Name, specArg}
	c.ExtraFiles = []*os.File{repW, specR} // fds 3 and 4
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	repW.Close()
	specR.Close()
	specW.Write([]byte(`{"policy":{"mode":"workspace-write","denied_from_the_future":["/home/u/.ssh"]}}`))
	specW.Close()
	out, _ := io.ReadAll(repR)
	err = c.Wait()
	var rep report
	if jerr := json.Unmarshal(out, &rep); jerr != nil || err == nil ||
		!strings.Contains(rep.Error, `unknown field "denied_from_the_future"`) {
		t.Fatalf("report %q (%v), exit %v: want the unknown field refused", out, jerr, err)
	}
	t.Logf("helper refused: %s", rep.Error)
}
