package builtin_test

import "testing"

// A hunk is found exactly, then ignoring trailing whitespace, then ignoring
// leading and trailing whitespace, then after normalising typographic
// punctuation; context lines keep the file's text, and the result names
// every looser pass used.
func TestApplyPatchTolerantMatching(t *testing.T) {
	update := func(why, file, want string, lines ...string) patchCase {
		return patchCase{why: why, before: map[string]string{"f.txt": file},
			patch: patchOf(append([]string{"*** Update File: f.txt"}, lines...)...),
			after: map[string]string{"f.txt": want}}
	}
	note := func(c patchCase, n string) patchCase {
		c.want = "Applied the patch:\nupdated f.txt" + n
		return c
	}
	const punct = " (hunk 1 matched after normalising typographic punctuation)"
	runPatchCases(t, []patchCase{
		note(update("curly double quotes in the file", "He said “hello”\nsome—dash\nend\n", "He said \"hi\"\nsome—dash\nend\n",
			"@@", `-He said "hello"`, `+He said "hi"`), punct),
		note(update("curly quotes in the patch", "msg = \"don't\"\n", "msg = \"do\"\n",
			"-msg = “don’t”", `+msg = "do"`), punct),
		note(update("an em dash in a context line is kept", "some—dash\nend\n", "some—dash\nEND\n",
			" some-dash", "-end", "+END"), punct),
		note(update("en dash, minus sign and figure dash", "a – b\nc − d\ne ‒ f\n", "a – b\nc − d\nx\n",
			" a - b", " c - d", "-e - f", "+x"), punct),
		note(update("no-break, thin and ideographic spaces", "x\u00a0=\u00a01\ny\u2009=\u30002\n", "x = 2\ny\u2009=\u30002\n",
			"-x = 1", "+x = 2", " y = 2"), punct),
		note(update("low and reversed quotes", "„q‟ ‚s‛\n", "ok\n", `-"q" 's'`, "+ok"), punct),
		note(update("trailing whitespace", "line1  \nline2   \n", "line1  \nchanged\n",
			" line1", "-line2", "+changed"), " (hunk 1 matched ignoring trailing whitespace)"),
		note(update("indentation", "\tif x {\n\t\treturn 1\n\t}\n", "\tif x {\n    return 2\n\t}\n",
			"-    return 1", "+    return 2"), " (hunk 1 matched ignoring leading and trailing whitespace)"),
		note(update("an exact match later beats a tolerant one earlier", "x = “a”\nx = \"a\"\n", "x = “a”\nx = \"b\"\n",
			`-x = "a"`, `+x = "b"`), ""),
		note(update("the strictest pass wins over an earlier place", "  v = 1\nv = 1 \n", "  v = 1\nv = 2\n",
			"-v = 1", "+v = 2"), " (hunk 1 matched ignoring trailing whitespace)"),
		note(update("an @@ line with typographic punctuation", "## Part – one\nbody\n## Part – two\nbody\n", "## Part – one\nbody\n## Part – two\nnew\n",
			"@@ ## Part - two", "-body", "+new"), ""),
		{why: "a blank last line the file lacks is ignored",
			before: map[string]string{"f.txt": "a\nb\n"},
			patch:  patchOf("*** Update File: f.txt", "-a", "+A", "", "*** Add File: g.txt", "+1"),
			after:  map[string]string{"f.txt": "A\nb\n", "g.txt": "1\n"},
			want:   "Applied the patch:\nupdated f.txt (hunk 1 matched without its blank last line)\nadded g.txt"},
		{why: "two hunks, two passes",
			before: map[string]string{"f.txt": "a \nb\n‘c’\n"},
			patch:  patchOf("*** Update File: f.txt", "@@", "-a", "+A", "@@", " b", "-'c'", "+C"),
			after:  map[string]string{"f.txt": "A\nb\nC\n"},
			want:   "Applied the patch:\nupdated f.txt (hunk 1 matched ignoring trailing whitespace; hunk 2 matched after normalising typographic punctuation)"},
		{why: "an empty line is an empty context line, not a hunk separator",
			before: map[string]string{"f.txt": "a\nb\nc\nd\n"},
			patch:  patchOf("*** Update File: f.txt", "@@", "-b", "+B", "", "-d", "+D"),
			want:   "Update f.txt failed: hunk 1: its context and removed lines were not found in order after the previous hunk, exactly or ignoring whitespace or typographic punctuation; read the file again\nNo file was changed.", isErr: true},
		{why: "other punctuation is not normalised",
			before: map[string]string{"f.txt": "a … b\n"},
			patch:  patchOf("*** Update File: f.txt", "-a ... b", "+c"),
			want:   "Update f.txt failed: hunk 1: its context and removed lines were not found in order after the previous hunk, exactly or ignoring whitespace or typographic punctuation; read the file again\nNo file was changed.", isErr: true},
	})
}

// An updated file ends with a newline (CRLF in a CRLF file); a file the
// patch empties is empty; a byte-order mark is kept out of the match and in
// the file.
func TestApplyPatchUpdatedFilesEndWithNewline(t *testing.T) {
	runPatchCases(t, []patchCase{
		{why: "a file without a final newline",
			before: map[string]string{"f.txt": "no newline at end"},
			patch:  patchOf("*** Update File: f.txt", "@@", "-no newline at end", "+first line", "+second line"),
			after:  map[string]string{"f.txt": "first line\nsecond line\n"},
			want:   "Applied the patch:\nupdated f.txt"},
		{why: "a change away from the last line",
			before: map[string]string{"f.txt": "a\nb"},
			patch:  patchOf("*** Update File: f.txt", "-a", "+A"),
			after:  map[string]string{"f.txt": "A\nb\n"},
			want:   "Applied the patch:\nupdated f.txt"},
		{why: "a CRLF file without a final newline",
			before: map[string]string{"f.txt": "one\r\ntwo"},
			patch:  patchOf("*** Update File: f.txt", " one", "-two", "+2"),
			after:  map[string]string{"f.txt": "one\r\n2\r\n"},
			want:   "Applied the patch:\nupdated f.txt"},
		{why: "every line removed",
			before: map[string]string{"f.txt": "only\n"},
			patch:  patchOf("*** Update File: f.txt", "-only"),
			after:  map[string]string{"f.txt": ""},
			want:   "Applied the patch:\nupdated f.txt"},
		{why: "a byte-order mark",
			before: map[string]string{"f.go": "\uFEFFpackage a\n"},
			patch:  patchOf("*** Update File: f.go", " package a", "+// x"),
			after:  map[string]string{"f.go": "\uFEFFpackage a\n// x\n"},
			want:   "Applied the patch:\nupdated f.go"},
		{why: "added lines at the end, for a bare @@",
			before: map[string]string{"f.txt": "a\nb"},
			patch:  patchOf("*** Update File: f.txt", "@@", "+c"),
			after:  map[string]string{"f.txt": "a\nb\nc\n"},
			want:   "Applied the patch:\nupdated f.txt"},
	})
}
