package builtin_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stepgate/stepgate/executor/builtin"
)

// patchCase is one apply_patch call: the files of the location before, the
// patch, and the files after with the result the model reads.
type patchCase struct {
	why    string
	before map[string]string // slash path → content
	patch  string
	after  map[string]string // nil: the same as before
	want   string            // the result's text
	isErr  bool
}

// runPatchCases runs each case in a fresh location and compares the whole
// tree of regular files after it, and the result.
func runPatchCases(t *testing.T, cases []patchCase) {
	t.Helper()
	tool, err := builtin.ApplyPatch()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.why, func(t *testing.T) {
			loc := t.TempDir()
			writeTree(t, loc, tc.before)
			text, isErr := "", false
			if p, err := prepare(t, tool, loc, builtin.ApplyPatchInput{PatchText: tc.patch}); err != nil {
				text, isErr = err.Error(), true
			} else {
				res := p.Run(context.Background())
				text, isErr = res.Text(), res.IsError
			}
			if text != tc.want || isErr != tc.isErr {
				t.Errorf("result (error %v):\n%s\nwant (error %v):\n%s", isErr, text, tc.isErr, tc.want)
			}
			after := tc.after
			if after == nil {
				after = tc.before
			}
			if diff := cmp.Diff(after, readTree(t, loc)); diff != "" {
				t.Errorf("files after the patch (-want +got):\n%s", diff)
			}
		})
	}
}

// readTree returns every regular file below dir: slash path → content.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// patchOf joins lines into a patch between the Begin and End markers.
func patchOf(lines ...string) string {
	return "*** Begin Patch\n" + strings.Join(lines, "\n") + "\n*** End Patch\n"
}

// invalid is the result of a patch that does not parse.
func invalid(detail string) string { return "Invalid tool input: patch: " + detail }
