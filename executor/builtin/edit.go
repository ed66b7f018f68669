package builtin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
)

// Refusal is an error whose text is model-facing and fixed (spelled as
// sentences, as the model reads them).
type Refusal string

// Error returns the refusal's text.
func (r Refusal) Error() string { return string(r) }

// Edit's fixed refusals.
const (
	EditIdentical Refusal = "No changes to apply: oldString and newString are identical."
	EditNotEmpty  Refusal = "oldString is empty, but the file is not: an empty oldString only creates a file or fills an empty one. Give the text to replace, or use write to replace the whole content."
	EditChanged   Refusal = "File changed after permission approval. Read it again before editing."
)

// EditInput is the input of edit.
type EditInput struct {
	Path       string `json:"path" jsonschema:"description=The file to edit (relative to the workspace, or absolute)"`
	OldString  string `json:"oldString" jsonschema:"description=The text to replace, as the file has it (whitespace and indentation included). Empty: create the file, or fill an empty one, with newString"`
	NewString  string `json:"newString" jsonschema:"description=The text to put in its place"`
	ReplaceAll bool   `json:"replaceAll,omitempty" jsonschema:"description=Replace every exact occurrence (default: oldString must occur once)"`
}

// absent is the digest edit observes for a file that does not exist.
const absent = "absent"

// editDescription is what the model reads of edit.
const editDescription = "Replace text in a file. oldString must occur exactly once (whitespace and indentation included), unless replaceAll is set, which replaces every exact occurrence. " +
	"Line endings do not matter: oldString may use LF or CRLF whatever the file uses, and newString is written in the file's own line ending (the one most of its lines use); a byte-order mark is kept. " +
	"Only when there is no exact match, these tolerant passes are tried in order; the first that finds oldString decides, and it must find exactly one place (it replaces that one, with or without replaceAll; more places are an error): " +
	"1) whole lines compared ignoring trailing spaces and tabs; " +
	"2) whole lines whose indentation differs by the same whitespace prefix on every non-blank line (newString is shifted by it too); " +
	"3) the escapes \\n \\t \\r \\\" \\' \\\\ in oldString and newString read as the characters they stand for; " +
	"4) typographic punctuation folded on both sides (curly quotes to ' and \", dashes and minus to -, non-breaking and fixed-width spaces to a space; newString is written as given). " +
	"The result says which pass matched. An empty oldString creates the file (and its directories) or fills an empty one (holding nothing, or only a byte-order mark, which is kept: the text is written in the encoding it names) with newString; on a file that is not empty it is an error. " +
	"Read the file first; an edit that waited for approval is refused if the file changed meanwhile. Several edits of one file in one step apply in order, each to the file as the previous one left it."

// Edit builds edit: text replacement in one file (see editDescription for
// the passes). It keeps the file's line endings and byte-order mark. A call
// that waited for a human (approved after a ticket, or recovered) is refused
// when the file changed after the call was decided: the digest seen then is
// recorded with the verdict, so an approval given later, or on another host,
// edits only the content the approver saw. Permission: edit on the path
// (saved as "*"), and external_directory first for a path outside the
// location.
func Edit() (*executor.Tool, error) {
	return executor.New("edit", editDescription,
		editFile, executor.WithEffect(descriptor.SideEffecting),
		executor.WithRequests(func(c executor.Call, in EditInput) ([]descriptor.Request, error) {
			if in.OldString == in.NewString {
				return nil, EditIdentical
			}
			return editRequests(c, in.Path)
		}),
		executor.WithObserve(func(c executor.Call, in EditInput) (string, error) {
			_, content, digest, err := readForEdit(c, in.Path, in.OldString == "")
			if err == nil && in.OldString == "" && !emptyFile(content) {
				return "", EditNotEmpty
			}
			return digest, err
		}))
}

// readForEdit reads the file at path, and its digest: absent, with no
// error, for a missing file when missingOK.
func readForEdit(c executor.Call, path string, missingOK bool) (p executor.Path, content, digest string, err error) {
	if p, err = c.ResolveWrite(path, false); err != nil {
		return p, "", "", err
	}
	if content, err = readResolved(p); err != nil {
		if missingOK && errors.Is(err, fs.ErrNotExist) {
			return p, "", absent, nil
		}
		return p, "", "", fmt.Errorf("cannot edit %s: %v", path, err)
	}
	return p, content, digestOf(content), nil
}

// digestOf is the digest edit observes for a file holding content.
func digestOf(content string) string {
	sum := sha256.Sum256([]byte(content))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// editFile runs an edit. It reports the digest it found and the one it left
// (executor.Call.Acted): an approval of another edit of the file, decided
// before this one ran, is then held to what this one left.
func editFile(_ context.Context, c executor.Call, in EditInput) (string, error) {
	p, content, digest, err := readForEdit(c, in.Path, in.OldString == "")
	if err != nil {
		return "", err
	}
	if c.Observed != "" && digest != c.Observed {
		return "", EditChanged
	}
	if in.OldString == "" {
		return fillFile(c, p, in, content, digest)
	}
	bom := strings.HasPrefix(content, utf8BOM)
	content = strings.TrimPrefix(content, utf8BOM)
	eol := lineEnding(content)
	m := matchIn{content: content, eol: eol, old: withEnding(in.OldString, eol), repl: withEnding(in.NewString, eol),
		rawOld: in.OldString, rawRepl: in.NewString}
	var (
		n    int
		pass matchPass
	)
	if n = strings.Count(content, m.old); n > 0 {
		if n > 1 && !in.ReplaceAll {
			return "", fmt.Errorf("oldString occurs %d times in %s: include more surrounding lines to make it unique, or set replaceAll", n, in.Path)
		}
		times := 1
		if in.ReplaceAll {
			times = -1
		}
		content = strings.Replace(content, m.old, m.repl, times)
	} else {
		var s splice
		if s, pass, err = tolerantMatch(m, in.Path); err != nil {
			return "", err
		}
		n, content = 1, content[:s.start]+s.text+content[s.end:]
	}
	if bom {
		content = utf8BOM + content
	}
	if _, err := write(p, []byte(content)); err != nil {
		return "", fmt.Errorf("cannot write %s: %v", in.Path, pathErr(err))
	}
	c.Acted(digest, digestOf(content))
	text := fmt.Sprintf("Edited %s: %d replacements", in.Path, n)
	if n == 1 {
		text = fmt.Sprintf("Edited %s: 1 replacement", in.Path)
	}
	if pass != passExact {
		text += " (matched " + string(pass) + ")"
	}
	return text, nil
}

// tolerantMatch runs the tolerant passes in order: the first that finds
// oldString decides, and it must find it once.
func tolerantMatch(m matchIn, path string) (splice, matchPass, error) {
	for _, p := range tolerantPasses {
		switch found := p.find(m); len(found) {
		case 0:
			continue
		case 1:
			return found[0], p.name, nil
		default:
			return splice{}, "", fmt.Errorf("oldString is not in %s exactly, and occurs %d times %s: include more surrounding lines to make it unique", path, len(found), p.name)
		}
	}
	return splice{}, "", fmt.Errorf("oldString not found in %s, exactly or by the tolerant passes (trailing whitespace, indentation, escapes, punctuation): read the file again and copy the text as it is", path)
}

// fillFile is an edit with an empty oldString: it creates the file, or
// fills an empty one, with newString.
func fillFile(c executor.Call, p executor.Path, in EditInput, content, digest string) (string, error) {
	if !emptyFile(content) {
		return "", EditNotEmpty
	}
	data := filled(content, in.NewString)
	if _, err := write(p, data); err != nil {
		return "", fmt.Errorf("cannot write %s: %v", in.Path, pathErr(err))
	}
	c.Acted(digest, digestOf(string(data)))
	if digest == absent {
		return fmt.Sprintf("Created %s (%d bytes)", in.Path, len(in.NewString)), nil
	}
	return fmt.Sprintf("Filled the empty file %s (%d bytes)", in.Path, len(in.NewString)), nil
}
