package builtin_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/builtin"
)

func prepare(t *testing.T, tool *executor.Tool, loc string, in any) (*executor.Prepared, error) {
	t.Helper()
	args, _ := json.Marshal(in)
	return tool.Prepare(executor.Call{Location: loc}, args)
}

// writeTree writes files (slash-separated paths relative to dir → content),
// creating their directories.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// runText prepares and runs one call and returns the text the model reads.
func runText(t *testing.T, tool *executor.Tool, loc string, in any) string {
	t.Helper()
	p, err := prepare(t, tool, loc, in)
	if err != nil {
		t.Fatal(err)
	}
	return p.Run(context.Background()).Text()
}

func TestWrite(t *testing.T) {
	tool, err := builtin.Write()
	if err != nil {
		t.Fatal(err)
	}
	loc, outside := t.TempDir(), t.TempDir()
	run := func(in builtin.WriteInput) executor.Result {
		t.Helper()
		p, err := prepare(t, tool, loc, in)
		if err != nil {
			t.Fatal(err)
		}
		return p.Run(context.Background())
	}
	if got := run(builtin.WriteInput{Path: "a/b/new.txt", Content: "hi"}).Text(); got != "Created a/b/new.txt (2 bytes)" {
		t.Errorf("create: %q", got)
	}
	if got := run(builtin.WriteInput{Path: "a/b/new.txt", Content: "again"}).Text(); got != "Overwrote a/b/new.txt (5 bytes)" {
		t.Errorf("overwrite: %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(loc, "a/b/new.txt")); string(b) != "again" {
		t.Errorf("file holds %q", b)
	}
	if res := run(builtin.WriteInput{Path: "a", Content: "x"}); !res.IsError {
		t.Errorf("writing over a directory: %+v", res)
	}
	// Permissions: edit on the path; outside, external_directory first.
	p, err := prepare(t, tool, loc, builtin.WriteInput{Path: filepath.Join(outside, "f.txt"), Content: "x"})
	if err != nil {
		t.Fatal(err)
	}
	outReal, _ := filepath.EvalSymlinks(outside)
	pattern := filepath.ToSlash(outReal) + "/*"
	want := []descriptor.Request{{Action: "external_directory", Resources: []string{pattern}, Save: []string{pattern}},
		{Action: "edit", Resources: []string{filepath.ToSlash(filepath.Join(outReal, "f.txt"))}, Save: []string{"*"}}}
	if diff := cmp.Diff(want, p.Requests()); diff != "" {
		t.Errorf("requests outside (-want +got):\n%s", diff)
	}
	if _, err := prepare(t, tool, loc, builtin.WriteInput{Path: "../escape.txt", Content: "x"}); err == nil {
		t.Error("../escape.txt was accepted")
	}
	// A symlink swapped in after the decision cannot lead the write out.
	p, err = prepare(t, tool, loc, builtin.WriteInput{Path: "late.txt", Content: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "stolen"), filepath.Join(loc, "late.txt")); err != nil {
		t.Fatal(err)
	}
	if res := p.Run(context.Background()); !res.IsError {
		t.Errorf("write through a symlink made after the check: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(outside, "stolen")); err == nil {
		t.Error("the write left the location")
	}
}
