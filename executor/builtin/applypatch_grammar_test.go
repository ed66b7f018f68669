package builtin_test

import "testing"

// *** Move to: renames the updated file, creating directories and replacing
// a file already at the destination.
func TestApplyPatchMoveTo(t *testing.T) {
	runPatchCases(t, []patchCase{
		{why: "renames into new directories",
			before: map[string]string{"old/name.txt": "old content\n"},
			patch:  patchOf("*** Update File: old/name.txt", "*** Move to: renamed/dir/name.txt", "@@", "-old content", "+new content"),
			after:  map[string]string{"renamed/dir/name.txt": "new content\n"},
			want:   "Applied the patch:\nmoved old/name.txt to renamed/dir/name.txt"},
		{why: "replaces an existing destination",
			before: map[string]string{"a.txt": "from\n", "b.txt": "existing\n"},
			patch:  patchOf("*** Update File: a.txt", "*** Move to: b.txt", "-from", "+new"),
			after:  map[string]string{"b.txt": "new\n"},
			want:   "Applied the patch:\nmoved a.txt to b.txt"},
		{why: "with no hunks, renames the file unchanged",
			before: map[string]string{"a.txt": "no newline"},
			patch:  patchOf("*** Update File: a.txt", "*** Move to: b/c.txt"),
			after:  map[string]string{"b/c.txt": "no newline"},
			want:   "Applied the patch:\nmoved a.txt to b/c.txt"},
		{why: "to the file itself, is an update",
			before: map[string]string{"a.txt": "x\n"},
			patch:  patchOf("*** Update File: a.txt", "*** Move to: ./a.txt", "-x", "+y"),
			after:  map[string]string{"a.txt": "y\n"},
			want:   "Applied the patch:\nmoved a.txt to ./a.txt"},
		{why: "a later section updates the destination",
			before: map[string]string{"a.txt": "x\n"},
			patch:  patchOf("*** Update File: a.txt", "*** Move to: b.txt", "-x", "+y", "*** Update File: b.txt", "-y", "+z"),
			after:  map[string]string{"b.txt": "z\n"},
			want:   "Applied the patch:\nmoved a.txt to b.txt\nupdated b.txt"},
		{why: "a later section cannot update the old path",
			before: map[string]string{"a.txt": "x\n"},
			patch:  patchOf("*** Update File: a.txt", "*** Move to: b.txt", "-x", "+y", "*** Update File: a.txt", "-y", "+z"),
			want:   "Update a.txt failed: no such file\nNo file was changed.", isErr: true},
		{why: "onto a directory",
			before: map[string]string{"a.txt": "x\n", "d/keep.txt": "k\n"},
			patch:  patchOf("*** Update File: a.txt", "*** Move to: d", "-x", "+y"),
			want:   "Move a.txt to d failed: d: it is a directory\nNo file was changed.", isErr: true},
		{why: "of a missing file",
			before: map[string]string{},
			patch:  patchOf("*** Update File: a.txt", "*** Move to: b.txt"),
			want:   "Move a.txt to b.txt failed: no such file\nNo file was changed.", isErr: true},
		{why: "Move to after a hunk",
			before: map[string]string{"a.txt": "x\n"},
			patch:  patchOf("*** Update File: a.txt", "-x", "+y", "*** Move to: b.txt"),
			want:   invalid(`line 5: "*** Move to:" comes right after "*** Update File:"`), isErr: true},
		{why: "Move to after Add File",
			before: map[string]string{},
			patch:  patchOf("*** Add File: a.txt", "*** Move to: b.txt", "+x"),
			want:   invalid(`line 3: "*** Move to:" comes right after "*** Update File:"`), isErr: true},
		{why: "Move to naming no file",
			before: map[string]string{"a.txt": "x\n"},
			patch:  patchOf("*** Update File: a.txt", "*** Move to: "),
			want:   invalid(`line 3: "*** Move to: " names no file`), isErr: true},
	})
}

// *** End of File after a hunk anchors it at the end of the file.
func TestApplyPatchEndOfFile(t *testing.T) {
	runPatchCases(t, []patchCase{
		{why: "the hunk replaces the last lines",
			before: map[string]string{"tail.txt": "alpha\nlast\n"},
			patch:  patchOf("*** Update File: tail.txt", "@@", "-last", "+end", "*** End of File"),
			after:  map[string]string{"tail.txt": "alpha\nend\n"},
			want:   "Applied the patch:\nupdated tail.txt"},
		{why: "with repeated lines, the last occurrence",
			before: map[string]string{"f.txt": "start\nmarker\nmiddle\nmarker\nend\n"},
			patch:  patchOf("*** Update File: f.txt", "@@", "-marker", "-end", "+marker-changed", "+end", "*** End of File"),
			after:  map[string]string{"f.txt": "start\nmarker\nmiddle\nmarker-changed\nend\n"},
			want:   "Applied the patch:\nupdated f.txt"},
		{why: "one repeated line: the last with End of File",
			before: map[string]string{"f.txt": "a = 1\nb\na = 1\n"},
			patch:  patchOf("*** Update File: f.txt", "-a = 1", "+a = 2", "*** End of File"),
			after:  map[string]string{"f.txt": "a = 1\nb\na = 2\n"},
			want:   "Applied the patch:\nupdated f.txt"},
		{why: "one repeated line: the first without it",
			before: map[string]string{"f.txt": "a = 1\nb\na = 1\n"},
			patch:  patchOf("*** Update File: f.txt", "-a = 1", "+a = 2"),
			after:  map[string]string{"f.txt": "a = 2\nb\na = 1\n"},
			want:   "Applied the patch:\nupdated f.txt"},
		{why: "after an earlier hunk",
			before: map[string]string{"f.txt": "x\nmid\nx\n"},
			patch:  patchOf("*** Update File: f.txt", "@@", "-x", "+first", "@@", " mid", "-x", "+last", "*** End of File"),
			after:  map[string]string{"f.txt": "first\nmid\nlast\n"},
			want:   "Applied the patch:\nupdated f.txt"},
		{why: "added lines only: appended",
			before: map[string]string{"f.txt": "a\nb\n"},
			patch:  patchOf("*** Update File: f.txt", "@@ a", "+z", "*** End of File"),
			after:  map[string]string{"f.txt": "a\nb\nz\n"},
			want:   "Applied the patch:\nupdated f.txt"},
		{why: "the lines are not at the end",
			before: map[string]string{"f.txt": "last\nmore\n"},
			patch:  patchOf("*** Update File: f.txt", "-last", "+end", "*** End of File"),
			want:   "Update f.txt failed: hunk 1: it ends at *** End of File, and the file's last lines are not its context and removed lines; read the file again\nNo file was changed.", isErr: true},
		{why: "in an added file",
			before: map[string]string{},
			patch:  patchOf("*** Add File: f.txt", "+x", "*** End of File"),
			want:   invalid(`line 4: "*** End of File" closes a hunk of "*** Update File:" after its lines`), isErr: true},
		{why: "a hunk line after it",
			before: map[string]string{"f.txt": "a\nb\n"},
			patch:  patchOf("*** Update File: f.txt", "-b", "+c", "*** End of File", "+d"),
			want:   invalid(`line 6: the hunk ended at "*** End of File": start the next one with @@`), isErr: true},
	})
}

// A patch wrapped in a heredoc, as a shell command writes it, is unwrapped;
// anything else around it is refused.
func TestApplyPatchHeredoc(t *testing.T) {
	body := "*** Begin Patch\n*** Add File: h.txt\n+heredoc content\n*** End Patch"
	added := map[string]string{"h.txt": "heredoc content\n"}
	ok := func(why, open, close string) patchCase {
		return patchCase{why: why, before: map[string]string{}, patch: open + "\n" + body + "\n" + close,
			after: added, want: "Applied the patch:\nadded h.txt"}
	}
	bad := func(why, patch, detail string) patchCase {
		return patchCase{why: why, before: map[string]string{}, patch: patch, want: invalid(detail), isErr: true}
	}
	runPatchCases(t, []patchCase{
		ok("cat <<'EOF'", "cat <<'EOF'", "EOF"),
		ok("<<EOF without cat", "<<EOF", "EOF"),
		ok(`<<"EOF"`, `<<"EOF"`, "EOF"),
		ok("apply_patch <<'EOF', codex's shell command", "apply_patch <<'EOF'", "EOF"),
		ok("another word, spaces and blank lines around", "\n  applypatch << PATCH_1  \n", "  PATCH_1\n\n"),
		ok("cat << 'EOF'", "cat << 'EOF'", "EOF"),
		bad("not closed", "cat <<'EOF'\n"+body, `line 5: the heredoc opened on line 1 ends with a line EOF alone`),
		bad("closed by another word", "<<EOF\n"+body+"\nEND", `line 6: the heredoc opened on line 1 ends with a line EOF alone`),
		bad("<<- (tabs stripped)", "<<-EOF\n"+body+"\nEOF", `line 1: "<<-EOF": a heredoc around the patch opens with <<EOF, <<'EOF' or <<"EOF", alone or after cat or apply_patch`),
		bad("piped to a shell", "cat <<'EOF' | sh\n"+body+"\nEOF", `line 1: "cat <<'EOF' | sh": a heredoc around the patch opens with <<EOF, <<'EOF' or <<"EOF", alone or after cat or apply_patch`),
		bad("after cd", "cd src && apply_patch <<'EOF'\n"+body+"\nEOF", `line 1: "cd src && apply_patch <<'EOF'": a heredoc around the patch opens with <<EOF, <<'EOF' or <<"EOF", alone or after cat or apply_patch`),
		bad("mismatched quotes", "<<'EOF\"\n"+body+"\nEOF", `line 1: "<<'EOF\"": a heredoc around the patch opens with <<EOF, <<'EOF' or <<"EOF", alone or after cat or apply_patch`),
		bad("holding nothing", "<<EOF\n\nEOF", `line 2: the heredoc holds no patch`),
		bad("line numbers count the wrapper", "<<EOF\n*** Begin Patch\n*** Add File: h.txt\nbad\n*** End Patch\nEOF", `line 4: every line of an added file starts with +`),
	})
}
