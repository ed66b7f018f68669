package builtin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
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
	EditEmptyOld  Refusal = "oldString must not be empty: use write to create a file or replace its whole content."
	EditChanged   Refusal = "File changed after permission approval. Read it again before editing."
)

// EditInput is the input of edit.
type EditInput struct {
	Path       string `json:"path" jsonschema:"description=The file to edit (relative to the workspace, or absolute)"`
	OldString  string `json:"oldString" jsonschema:"description=The exact text to replace, including whitespace and indentation"`
	NewString  string `json:"newString" jsonschema:"description=The text to put in its place"`
	ReplaceAll bool   `json:"replaceAll,omitempty" jsonschema:"description=Replace every occurrence (default: oldString must occur once)"`
}

const utf8BOM = "\uFEFF"

// Edit builds edit: exact-match replacement in one file. It keeps the file's
// line endings and byte-order mark, and refuses when the file changed after
// the call was decided: the digest seen then is recorded with the verdict,
// so an approval given later, or on another host, edits only the content the
// approver saw. Permission: edit on the path (saved as "*"), and
// external_directory first for a path outside the location.
func Edit() (*executor.Tool, error) {
	return executor.New("edit",
		"Replace exact text in a file: oldString must match the file exactly (whitespace and indentation included) and occur once, unless replaceAll is set. Line endings and a byte-order mark are kept. Read the file first; an edit is refused if the file changed after it was approved.",
		editFile, executor.WithEffect(descriptor.SideEffecting),
		executor.WithRequests(func(c executor.Call, in EditInput) ([]descriptor.Request, error) {
			switch {
			case in.OldString == in.NewString:
				return nil, EditIdentical
			case in.OldString == "":
				return nil, EditEmptyOld
			}
			return editRequests(c, in.Path)
		}),
		executor.WithObserve(func(c executor.Call, in EditInput) (string, error) {
			_, _, digest, err := readForEdit(c, in.Path)
			return digest, err
		}))
}

// readForEdit reads the file at path, and its digest.
func readForEdit(c executor.Call, path string) (p executor.Path, content, digest string, err error) {
	if p, err = c.Resolve(path, false); err != nil {
		return p, "", "", err
	}
	if content, err = readResolved(p); err != nil {
		return p, "", "", fmt.Errorf("cannot edit %s: %v", path, err)
	}
	sum := sha256.Sum256([]byte(content))
	return p, content, "sha256:" + hex.EncodeToString(sum[:]), nil
}

func editFile(_ context.Context, c executor.Call, in EditInput) (string, error) {
	p, content, digest, err := readForEdit(c, in.Path)
	if err != nil {
		return "", err
	}
	if c.Observed != "" && digest != c.Observed {
		return "", EditChanged
	}
	bom := strings.HasPrefix(content, utf8BOM)
	content = strings.TrimPrefix(content, utf8BOM)
	old, repl := in.OldString, in.NewString
	if strings.Contains(content, "\r\n") {
		old = toCRLF(old)
		repl = toCRLF(repl)
	}
	n := strings.Count(content, old)
	switch {
	case n == 0:
		return "", fmt.Errorf("oldString not found in %s: it must match the file exactly, including whitespace and indentation; read the file again", in.Path)
	case n > 1 && !in.ReplaceAll:
		return "", fmt.Errorf("oldString occurs %d times in %s: include more surrounding lines to make it unique, or set replaceAll", n, in.Path)
	}
	if in.ReplaceAll {
		content = strings.ReplaceAll(content, old, repl)
	} else {
		content = strings.Replace(content, old, repl, 1)
	}
	if bom {
		content = utf8BOM + content
	}
	if _, err := write(p, []byte(content)); err != nil {
		return "", fmt.Errorf("cannot write %s: %v", in.Path, pathErr(err))
	}
	if n == 1 {
		return fmt.Sprintf("Edited %s: 1 replacement", in.Path), nil
	}
	return fmt.Sprintf("Edited %s: %d replacements", in.Path, n), nil
}

// toCRLF writes s's line breaks as CRLF, for a file that uses them.
func toCRLF(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n")
}
