package builtin

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzPatch feeds arbitrary patches and files to the parser and the hunk
// applier. They must never panic; a parsed patch wrapped in a heredoc parses
// to the same sections; an update whose hunks only restate context leaves
// the file as an update with no hunks does (the file's own lines, with the
// final newline added); and an applied update ends with a newline.
// The seed corpus is in testdata/fuzz/FuzzPatch.
func FuzzPatch(f *testing.F) {
	f.Add("*** Begin Patch\n*** Update File: a\n@@ f\n x\n-y\n+z\n*** End Patch", "f\nx\ny\n")
	f.Add("*** Begin Patch\n*** Add File: a\n+1\n*** Delete File: b\n*** End Patch", "")
	f.Add("*** Begin Patch\r\n*** Update File: a\r\n one\r\n*** End Patch\r\n", "one\r\ntwo\r\n")
	f.Add("*** Begin Patch\n*** Update File: a\n@@\n@@ g\n+new\n*** End Patch", "g\n")
	f.Fuzz(func(t *testing.T, patch, file string) {
		ops, err := parsePatch(patch)
		if err != nil {
			return
		}
		lines := strings.Split(strings.ReplaceAll(patch, "\r\n", "\n"), "\n")
		if first, _ := trimBlank(lines, 0, len(lines)); strings.TrimSpace(lines[first]) == beginMarker { // not wrapped already
			wrapped, err := parsePatch("cat <<'EOF'\n" + patch + "\nEOF")
			if err != nil {
				t.Fatalf("the patch parses, wrapped in a heredoc it does not: %v", err)
			}
			if diff := cmp.Diff(ops, wrapped, cmp.AllowUnexported(patchOp{}, patchHunk{}, hunkLine{})); diff != "" {
				t.Fatalf("wrapped in a heredoc, the patch reads otherwise (-bare +wrapped):\n%s", diff)
			}
		}
		for _, op := range ops {
			if op.kind != patchUpdate {
				continue
			}
			out, _, err := applyHunks(file, op.hunks)
			if err != nil {
				continue
			}
			if out != "" && !strings.HasSuffix(out, "\n") {
				t.Fatalf("%q updated to %q: no final newline", file, out)
			}
			contextOnly := true
			for _, h := range op.hunks {
				for _, l := range h.lines {
					contextOnly = contextOnly && l.op == ' '
				}
			}
			if same, _, _ := applyHunks(file, nil); contextOnly && out != same {
				t.Fatalf("context-only hunks changed %q into %q, not %q", file, out, same)
			}
		}
	})
}

// The parser reads every section of the grammar into operations.
func TestParsePatch(t *testing.T) {
	tests := []struct {
		why   string
		patch string
		want  []patchOp
	}{
		{"every section",
			"*** Begin Patch\n*** Add File: a\n+1\n+\n*** Update File: b\n*** Move to: c/d\n@@ func f() {\n x\n-y\n+z\n\n*** End of File\n*** Delete File: e\n*** End Patch",
			[]patchOp{
				{kind: patchAdd, path: "a", lines: []string{"1", ""}},
				{kind: patchUpdate, path: "b", moveTo: "c/d", hunks: []patchHunk{{anchor: "func f() {", eof: true,
					lines: []hunkLine{{' ', "x"}, {'-', "y"}, {'+', "z"}, {' ', ""}}}}},
				{kind: patchDelete, path: "e"},
			}},
		{"a first hunk without @@, then two",
			"*** Begin Patch\n*** Update File: b\n-y\n+z\n@@\n a\n@@ g\n+h\n*** End Patch",
			[]patchOp{{kind: patchUpdate, path: "b", hunks: []patchHunk{
				{lines: []hunkLine{{'-', "y"}, {'+', "z"}}},
				{lines: []hunkLine{{' ', "a"}}},
				{anchor: "g", lines: []hunkLine{{'+', "h"}}},
			}}}},
		{"a pure rename", "\n\n*** Begin Patch\n*** Update File: b\n*** Move to: c\n*** End Patch\n\n",
			[]patchOp{{kind: patchUpdate, path: "b", moveTo: "c"}}},
	}
	for _, tt := range tests {
		got, err := parsePatch(tt.patch)
		if err != nil {
			t.Errorf("%s: %v", tt.why, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(patchOp{}, patchHunk{}, hunkLine{})); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.why, diff)
		}
	}
	for _, bad := range []struct{ patch, want string }{
		{"", `the patch is empty: it starts with "*** Begin Patch"`},
		{"*** Begin Patch\n*** Update File: b\n@@\n@@ g\n+h\n*** End Patch", "update b: hunk 1 has no lines"},
		{"*** Begin Patch\n*** Update File: b\n*** End Patch", "update b: no hunks"},
		{"*** Begin Patch\n*** Update File: b\n*** Frobnicate: x\n*** End Patch", `line 3: "*** Frobnicate: x" is not a patch line: the *** lines are Begin Patch, Add File:, Update File:, Move to:, End of File, Delete File: and End Patch`},
		{"*** Begin Patch\n*** Update File: b\n@@\n*** End of File\n*** End Patch", `line 4: "*** End of File" closes a hunk of "*** Update File:" after its lines`},
		{"*** Begin Patch\n*** Update File: b\n*** Move to: c\n*** Move to: d\n*** End Patch", `line 4: "*** Move to:" comes right after "*** Update File:"`},
		{"*** Begin Patch\n*** Delete File: b\n*** Move to: c\n*** End Patch", `line 3: "*** Move to:" comes right after "*** Update File:"`},
		{"*** Begin Patch\n*** Add File: a\n+1", `line 3: a patch ends with "*** End Patch"`},
		{"*** Begin Patch", `line 1: a patch ends with "*** End Patch"`},
	} {
		if _, err := parsePatch(bad.patch); err == nil || err.Error() != bad.want {
			t.Errorf("%q: error %v, want %q", bad.patch, err, bad.want)
		}
	}
}
