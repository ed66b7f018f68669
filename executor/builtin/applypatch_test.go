package builtin_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor/builtin"
)

func TestApplyPatch(t *testing.T) {
	tool, err := builtin.ApplyPatch()
	if err != nil {
		t.Fatal(err)
	}
	loc, outside := t.TempDir(), t.TempDir()
	put := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(loc, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	get := func(name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(loc, name))
		if err != nil {
			return "<absent>"
		}
		return string(b)
	}
	put("main.go", "package main\n\nfunc a() {\n\treturn 1\n}\n\nfunc b() {\n\treturn 1\n}\n")
	put("crlf.txt", "one\r\ntwo\r\n")
	put("old.txt", "bye\n")
	ext := filepath.Join(outside, "notes.txt")

	patch := "*** Begin Patch\n" +
		"*** Add File: lib/new.go\n+package lib\n+\n+const X = 1\n" +
		"*** Update File: main.go\n@@ func b() {\n-\treturn 1\n+\treturn 2\n" +
		"*** Update File: crlf.txt\n one\n-two\n+2\n" +
		"*** Delete File: old.txt\n" +
		"*** Add File: " + ext + "\n+outside\n" +
		"*** End Patch\n"
	p, err := prepare(t, tool, loc, builtin.ApplyPatchInput{PatchText: patch})
	if err != nil {
		t.Fatal(err)
	}
	wantReqs := []descriptor.Request{
		{Action: "external_directory", Resources: []string{filepath.ToSlash(outside) + "/*"}, Save: []string{filepath.ToSlash(outside) + "/*"}},
		{Action: "edit", Resources: []string{"lib/new.go", "main.go", "crlf.txt", "old.txt", filepath.ToSlash(ext)}, Save: []string{"*"}, Root: realSlash(t, loc)},
	}
	if diff := cmp.Diff(wantReqs, p.Requests()); diff != "" {
		t.Errorf("one edit request for every file (-want +got):\n%s", diff)
	}
	res := p.Run(context.Background())
	want := "Applied the patch:\nadded lib/new.go\nupdated main.go\nupdated crlf.txt\ndeleted old.txt\nadded " + ext
	if res.Text() != want || res.IsError {
		t.Errorf("result %q (error %v), want %q", res.Text(), res.IsError, want)
	}
	for name, body := range map[string]string{
		"lib/new.go": "package lib\n\nconst X = 1\n",
		"main.go":    "package main\n\nfunc a() {\n\treturn 1\n}\n\nfunc b() {\n\treturn 2\n}\n",
		"crlf.txt":   "one\r\n2\r\n",
		"old.txt":    "<absent>",
	} {
		if got := get(name); got != body {
			t.Errorf("%s holds %q, want %q", name, got, body)
		}
	}
	if b, _ := os.ReadFile(ext); string(b) != "outside\n" {
		t.Errorf("external file %q", b)
	}

	// A later section that cannot apply: nothing is written, not even the
	// sections before it.
	partial := "*** Begin Patch\n" +
		"*** Update File: main.go\n-\treturn 2\n+\treturn 3\n" +
		"*** Update File: crlf.txt\n-three\n+3\n" +
		"*** Add File: later.txt\n+x\n" +
		"*** End Patch"
	p, err = prepare(t, tool, loc, builtin.ApplyPatchInput{PatchText: partial})
	if err != nil {
		t.Fatal(err)
	}
	res = p.Run(context.Background())
	want = "Update crlf.txt failed: hunk 1: its context and removed lines were not found in order after the previous hunk, exactly or ignoring whitespace or typographic punctuation; read the file again\n" +
		"No file was changed."
	if res.Text() != want || !res.IsError {
		t.Errorf("partial: %q (error %v), want %q", res.Text(), res.IsError, want)
	}
	if got := get("main.go"); got != "package main\n\nfunc a() {\n\treturn 1\n}\n\nfunc b() {\n\treturn 2\n}\n" {
		t.Errorf("main.go after the refused patch: %q", got)
	}
	if get("later.txt") != "<absent>" {
		t.Error("a file after the failure was written")
	}

	for _, bad := range []string{
		"", "*** Add File: x\n+y\n*** End Patch",
		"*** Begin Patch\n*** Add File: x\ny\n*** End Patch",
		"*** Begin Patch\n*** End Patch",
		"*** Begin Patch\n*** Update File: x\n*** End Patch",
		"*** Begin Patch\n*** Add File: ../x\n+y\n*** End Patch",
	} {
		if _, err := prepare(t, tool, loc, builtin.ApplyPatchInput{PatchText: bad}); err == nil {
			t.Errorf("patch %q was accepted", bad)
		}
	}
}
