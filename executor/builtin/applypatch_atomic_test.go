package builtin_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/builtin"
)

// Every section is checked and computed before any file is written: a
// patch whose later section cannot apply changes no file. Sections apply in
// order, each to the files as the earlier ones left them.
func TestApplyPatchVerifiesEverythingBeforeWriting(t *testing.T) {
	main := map[string]string{"main.go": "a\n", "old.txt": "bye\n"}
	fail := func(why, want string, lines ...string) patchCase {
		return patchCase{why: why, before: main, patch: patchOf(lines...), want: want + "\nNo file was changed.", isErr: true}
	}
	runPatchCases(t, []patchCase{
		fail("the 2nd section's file is missing: the 1st Add File stays absent", "Update missing.txt failed: no such file",
			"*** Add File: created.txt", "+hello", "*** Update File: missing.txt", "@@", "-old", "+new"),
		fail("a later hunk is not found: earlier sections untouched", "Update main.go failed: hunk 1: its context and removed lines were not found in order after the previous hunk, exactly or ignoring whitespace or typographic punctuation; read the file again",
			"*** Add File: new.txt", "+n", "*** Delete File: old.txt", "*** Update File: main.go", "-nope", "+x"),
		fail("a missing file to delete", "Delete nope.txt failed: no such file",
			"*** Add File: x.txt", "+x", "*** Delete File: nope.txt"),
		fail("a second delete of one file", "Delete old.txt failed: no such file",
			"*** Delete File: old.txt", "*** Delete File: old.txt"),
		fail("an update of a file deleted before", "Update old.txt failed: no such file",
			"*** Delete File: old.txt", "*** Update File: old.txt", "-bye", "+hi"),
		fail("a file below a file the patch adds", "Add a/b failed: a is a file this patch writes, so a/b cannot be below it",
			"*** Add File: a", "+1", "*** Add File: a/b", "+2"),
		fail("a file where the patch adds a directory", "Add a failed: this patch writes a/b below it, so it cannot be a file",
			"*** Add File: a/b", "+2", "*** Add File: a", "+1"),
		{why: "Delete File of a directory",
			before: map[string]string{"dir/f.txt": "f\n"},
			patch:  patchOf("*** Add File: n.txt", "+n", "*** Delete File: dir"),
			want:   "Delete dir failed: it is a directory\nNo file was changed.", isErr: true},
		{why: "Add File onto a directory",
			before: map[string]string{"d/f": "x"},
			patch:  patchOf("*** Add File: d", "+x"),
			want:   "Add d failed: it is a directory\nNo file was changed.", isErr: true},
		{why: "sections see what the earlier ones left",
			before: main,
			patch:  patchOf("*** Add File: n.txt", "+1", "*** Update File: n.txt", "-1", "+2", "*** Delete File: old.txt", "*** Add File: old.txt", "+again"),
			after:  map[string]string{"main.go": "a\n", "n.txt": "2\n", "old.txt": "again\n"},
			want:   "Applied the patch:\nadded n.txt\nupdated n.txt\ndeleted old.txt\nadded old.txt"},
	})
}

// *** Add File: on an existing file replaces it, as the reference
// implementations do; its request is edit on the file like any other.
func TestApplyPatchAddFileReplaces(t *testing.T) {
	runPatchCases(t, []patchCase{
		{why: "an existing file",
			before: map[string]string{"dup.txt": "old content\n"},
			patch:  patchOf("*** Add File: dup.txt", "+new content"),
			after:  map[string]string{"dup.txt": "new content\n"},
			want:   "Applied the patch:\nreplaced dup.txt"},
		{why: "with no lines: emptied",
			before: map[string]string{"dup.txt": "old content\n"},
			patch:  patchOf("*** Add File: dup.txt"),
			after:  map[string]string{"dup.txt": ""},
			want:   "Applied the patch:\nreplaced dup.txt"},
	})
}

// A move's permission request names both paths, each resolved like any
// written file (external_directory outside the location), and the
// destination is held to the decision like the source.
func TestApplyPatchMoveRequests(t *testing.T) {
	tool, err := builtin.ApplyPatch()
	if err != nil {
		t.Fatal(err)
	}
	loc, outside := t.TempDir(), t.TempDir()
	writeTree(t, loc, map[string]string{"a.txt": "x\n", "dup.txt": "d\n", "sub/keep.txt": "k\n", "other/keep.txt": "o\n"})
	ext := filepath.Join(outside, "x.txt")
	root := realSlash(t, loc) // the gate also matches the paths inside in their absolute form
	for _, tc := range []struct {
		why   string
		patch string
		want  []descriptor.Request
	}{
		{"a move inside the location",
			patchOf("*** Update File: a.txt", "*** Move to: b/c.txt", "-x", "+y"),
			[]descriptor.Request{{Action: "edit", Resources: []string{"a.txt", "b/c.txt"}, Save: []string{"*"}, Root: root}}},
		{"a move out of the location",
			patchOf("*** Update File: a.txt", "*** Move to: "+ext),
			[]descriptor.Request{
				{Action: "external_directory", Resources: []string{filepath.ToSlash(outside) + "/*"}, Save: []string{filepath.ToSlash(outside) + "/*"}},
				{Action: "edit", Resources: []string{"a.txt", filepath.ToSlash(ext)}, Save: []string{"*"}, Root: root}}},
		{"an Add File on an existing file",
			patchOf("*** Add File: dup.txt", "+new"),
			[]descriptor.Request{{Action: "edit", Resources: []string{"dup.txt"}, Save: []string{"*"}, Root: root}}},
	} {
		p, err := prepare(t, tool, loc, builtin.ApplyPatchInput{PatchText: tc.patch})
		if err != nil {
			t.Fatalf("%s: %v", tc.why, err)
		}
		if diff := cmp.Diff(tc.want, p.Requests()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.why, diff)
		}
	}
	if _, err := prepare(t, tool, loc, builtin.ApplyPatchInput{PatchText: patchOf("*** Update File: a.txt", "*** Move to: ../x.txt")}); err == nil {
		t.Error("a move out of the location by ../ was accepted")
	}

	// The destination's directory swapped for a symlink after the decision.
	p, err := prepare(t, tool, loc, builtin.ApplyPatchInput{PatchText: patchOf("*** Update File: a.txt", "*** Move to: sub/new.txt", "-x", "+y")})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(loc, "sub"), filepath.Join(loc, "sub.was")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("other", filepath.Join(loc, "sub")); err != nil {
		t.Fatal(err)
	}
	want := executor.ErrorResult("Path changed after permission approval: sub/new.txt\nNo file was changed.")
	if diff := cmp.Diff(want, p.Run(context.Background())); diff != "" {
		t.Errorf("a move whose destination changed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"a.txt": "x\n", "dup.txt": "d\n", "sub.was/keep.txt": "k\n", "other/keep.txt": "o\n"}, readTree(t, loc)); diff != "" {
		t.Errorf("files after the refusal (-want +got):\n%s", diff)
	}
}
