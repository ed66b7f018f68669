package builtin

// applyPatchDescription is what the model reads about apply_patch: the
// grammar parsePatch reads and every tolerance of unwrapHeredoc and
// applyHunks, stated exactly.
const applyPatchDescription = `Apply a patch that adds, updates, moves and deletes files. Format:
*** Begin Patch
*** Add File: path/new.go
+each line of the new file, prefixed with +
*** Update File: path/old.go
*** Move to: path/renamed.go
@@ optional line to find first (e.g. a function signature)
 a context line (prefixed with a space)
-a line to remove
+a line to add
*** End of File
*** Delete File: path/gone.go
*** End Patch
Sections:
- Add File creates the file (and its directories); an existing file is replaced.
- Update File changes the file with hunks. "*** Move to: NEW", right after the Update File line, writes the result to NEW instead (creating its directories, replacing a file already there) and removes the old file; a move with no hunks renames the file unchanged.
- Delete File removes a file (not a directory); no lines follow it.
Hunks: each starts with an "@@" line (the first hunk may omit it); its lines start with a space (context), - (removed) or + (added), and an empty line is an empty context line. "@@ TEXT" finds the first line, at or after the end of the previous hunk, whose trimmed text is TEXT (failing that, the first equal to it with punctuation read as ASCII, see Matching), and the hunk's lines are searched from that line on; a bare "@@" only starts a hunk. "*** End of File" after a hunk's lines anchors it at the end of the file: its context and removed lines must be the file's last lines (so with repeated lines, the last occurrence matches). A hunk of only + lines goes right after its @@ TEXT line; without one, or with *** End of File, at the end of the file.
Matching: a hunk's context and removed lines must appear in the file in order, after the previous hunk. They are searched exactly; if that finds nothing, ignoring trailing whitespace; then ignoring leading and trailing whitespace; then also reading typographic punctuation as ASCII (the quotes and primes ‘ ’ ‚ ‛ ′ ‵ as ', “ ” „ ‟ ″ ‶ « » as ", the hyphens and dashes ‐ ‑ ‒ – — ― ⁃ and the minus sign − as -, and the no-break space and the other Unicode spaces U+2000–U+200A, U+202F, U+205F, U+3000 as a space; nothing else is normalised; edit's punctuation pass folds the same characters). The first place found by the strictest pass that finds one wins, and the result names the pass of each hunk not matched exactly. A hunk not found whose last line is an empty context line is searched again without it. Context lines keep the file's text; removed lines are replaced by the added lines as written.
Result files: an updated file ends with a newline; a file holding any CRLF is written with CRLF throughout; a byte-order mark is kept.
Heredoc: the patch may be wrapped as a shell command writes it, with a first line <<EOF, <<'EOF' or <<"EOF" (any word of letters, digits and _ in place of EOF), alone or after cat or apply_patch, and a last line holding the word alone (blank lines around are ignored). Nothing else may surround the patch.
All or nothing: every section is checked and computed before any file is written; if one cannot apply, no file is changed and the result says why. Sections apply in order, each to the files as the ones before it left them. Only if writing fails after that does the result list the files already changed and the sections not attempted.`
