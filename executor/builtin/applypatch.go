package builtin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
)

// ApplyPatchInput is the input of apply_patch.
type ApplyPatchInput struct {
	PatchText string `json:"patchText" jsonschema:"description=The patch: *** Begin Patch / *** Add File: | *** Update File: | *** Delete File: sections / *** End Patch"`
}

const applyPatchDescription = `Apply a patch that adds, updates and deletes files. Format:
*** Begin Patch
*** Add File: path/new.go
+each line of the new file, prefixed with +
*** Update File: path/old.go
@@ optional line to find first (e.g. a function signature)
 a context line (prefixed with a space)
-a line to remove
+a line to add
*** Delete File: path/gone.go
*** End Patch
An update may hold several @@ hunks; each must match the file exactly after the previous one. Files are changed one after another, in patch order: if one fails, the result says exactly which files were already changed and which were not touched.`

// ApplyPatch builds apply_patch. Permission: one edit request naming every
// file, and external_directory for each directory outside the location.
func ApplyPatch() (*executor.Tool, error) {
	return executor.New("apply_patch", applyPatchDescription, applyPatch,
		executor.WithEffect(descriptor.SideEffecting), executor.WithAction("edit"),
		executor.WithRequests(func(c executor.Call, in ApplyPatchInput) ([]descriptor.Request, error) {
			ops, err := parsePatch(in.PatchText)
			if err != nil {
				return nil, fmt.Errorf("patch: %w", err)
			}
			var reqs []descriptor.Request
			var files []string
			for _, op := range ops {
				p, err := c.Resolve(op.path, false)
				if err != nil {
					return nil, err
				}
				for _, r := range p.Requests() {
					if !slices.ContainsFunc(reqs, func(q descriptor.Request) bool { return slices.Equal(q.Resources, r.Resources) }) {
						reqs = append(reqs, r)
					}
				}
				if !slices.Contains(files, p.Resource()) {
					files = append(files, p.Resource())
				}
			}
			return append(reqs, descriptor.Request{Action: "edit", Resources: files, Save: []string{"*"}}), nil
		}))
}

func applyPatch(_ context.Context, c executor.Call, in ApplyPatchInput) (string, error) {
	ops, err := parsePatch(in.PatchText)
	if err != nil {
		return "", fmt.Errorf("patch: %w", err)
	}
	for _, op := range ops { // before any change: every file is still where it was approved
		if _, err := c.Resolve(op.path, false); errors.Is(err, executor.ErrPathChanged) {
			//lint:ignore ST1005 the text is model-visible: a refusal, then what it left alone
			return "", fmt.Errorf("%w\nNo file was changed.", err)
		}
	}
	var done []string
	for i, op := range ops {
		if err := applyOp(c, op); err != nil {
			var b strings.Builder
			fmt.Fprintf(&b, "%s %s failed: %v", verbOf(op.kind), op.path, err)
			if len(done) > 0 {
				fmt.Fprintf(&b, "\nAlready applied (left in place): %s", strings.Join(done, "; "))
			} else {
				b.WriteString("\nNo file was changed.")
			}
			if rest := ops[i+1:]; len(rest) > 0 {
				var names []string
				for _, r := range rest {
					names = append(names, r.path)
				}
				fmt.Fprintf(&b, "\nNot attempted: %s", strings.Join(names, ", "))
			}
			return "", errors.New(b.String())
		}
		done = append(done, pastOf(op.kind)+" "+op.path)
	}
	return "Applied the patch:\n" + strings.Join(done, "\n"), nil
}

// verbOf and pastOf name an operation in a failure and in a report.
func verbOf(kind string) string {
	switch kind {
	case patchAdd:
		return "Add"
	case patchDelete:
		return "Delete"
	}
	return "Update"
}

func pastOf(kind string) string {
	switch kind {
	case patchAdd:
		return "added"
	case patchDelete:
		return "deleted"
	}
	return "updated"
}

// applyOp changes one file, resolving its path again (time has passed
// since the decision) and going through os.Root inside the location.
func applyOp(c executor.Call, op patchOp) error {
	p, err := c.Resolve(op.path, false)
	if err != nil {
		return err
	}
	switch op.kind {
	case patchAdd:
		if fi, err := statResolved(p); err == nil && !fi.IsDir() {
			return errors.New("the file already exists; update it instead")
		}
		content := strings.Join(op.lines, "\n")
		if len(op.lines) > 0 {
			content += "\n"
		}
		_, err := write(p, []byte(content))
		return err
	case patchDelete:
		return removeResolved(p)
	}
	content, err := readResolved(p)
	if err != nil {
		return err
	}
	updated, err := applyHunks(content, op.hunks)
	if err != nil {
		return err
	}
	_, err = write(p, []byte(updated))
	return err
}

func removeResolved(p executor.Path) error {
	var err error
	if p.External {
		err = os.Remove(p.Real)
	} else {
		var root *os.Root
		if root, err = os.OpenRoot(p.Root); err != nil {
			return err
		}
		defer root.Close()
		err = root.Remove(p.Rel)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return errors.New("no such file")
	}
	return err
}
