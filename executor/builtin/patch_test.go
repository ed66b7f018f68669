package builtin

import (
	"strings"
	"testing"
)

// FuzzPatch feeds arbitrary patches and files to the parser and the hunk
// applier: they must never panic, and a parsed update whose hunks only
// restate context must leave a file it applies to unchanged.
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
		for _, op := range ops {
			if op.kind != patchUpdate {
				continue
			}
			out, err := applyHunks(file, op.hunks)
			if err != nil {
				continue
			}
			contextOnly := true
			for _, h := range op.hunks {
				if strings.Join(h.old, "\n") != strings.Join(h.new, "\n") {
					contextOnly = false
				}
			}
			if contextOnly && out != file && strings.ReplaceAll(out, "\r\n", "\n") != strings.ReplaceAll(file, "\r\n", "\n") {
				t.Fatalf("context-only hunks changed %q into %q", file, out)
			}
		}
	})
}
