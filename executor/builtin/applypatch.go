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
	PatchText string `json:"patchText" jsonschema:"description=The patch: *** Begin Patch then *** Add File: / *** Update File: (with optional *** Move to:) / *** Delete File: sections then *** End Patch (see the tool's description)"`
}

// ApplyPatch builds apply_patch. Permission: one edit request naming every
// file it writes or deletes (both paths of a move), and external_directory
// for each directory outside the location.
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
				for _, path := range op.paths() {
					p, err := c.Resolve(path, false)
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
			}
			return append(reqs, descriptor.Request{Action: "edit", Resources: files, Save: []string{"*"}}), nil
		}))
}

// paths are the paths a section touches: its file, then a move's destination.
func (op patchOp) paths() []string {
	if op.moveTo != "" {
		return []string{op.path, op.moveTo}
	}
	return []string{op.path}
}

func applyPatch(_ context.Context, c executor.Call, in ApplyPatchInput) (string, error) {
	ops, err := parsePatch(in.PatchText)
	if err != nil {
		return "", fmt.Errorf("patch: %w", err)
	}
	// Before any change: every path is still where it was approved.
	paths := make([][2]executor.Path, len(ops))
	for i, op := range ops {
		for j, path := range op.paths() {
			p, err := c.ResolveWrite(path, false)
			if errors.Is(err, executor.ErrPathChanged) {
				//lint:ignore ST1005 the text is model-visible: a refusal, then what it left alone
				return "", fmt.Errorf("%w\nNo file was changed.", err)
			}
			if err != nil {
				//lint:ignore ST1005 the text is model-visible: a refusal, then what it left alone
				return "", fmt.Errorf("%s failed: %w\nNo file was changed.", sectionName(op), err)
			}
			paths[i][j] = p
		}
	}
	steps, err := planPatch(ops, paths)
	if err != nil {
		//lint:ignore ST1005 the text is model-visible: a refusal, then what it left alone
		return "", fmt.Errorf("%w\nNo file was changed.", err)
	}
	return commitPatch(steps)
}

// commitPatch writes what planPatch computed, in patch order. A write that
// fails (the disk's doing: everything was checked) stops it, and the error
// says which files were changed and which sections were not attempted.
func commitPatch(steps []patchStep) (string, error) {
	var done []string
	for i, s := range steps {
		if half, err := s.apply(); err != nil {
			if half != "" {
				done = append(done, half)
			}
			var b strings.Builder
			fmt.Fprintf(&b, "%s failed: %v", sectionName(s.op), err)
			if len(done) > 0 {
				fmt.Fprintf(&b, "\nAlready applied (left in place): %s", strings.Join(done, "; "))
			} else {
				b.WriteString("\nNo file was changed.")
			}
			if rest := steps[i+1:]; len(rest) > 0 {
				var names []string
				for _, r := range rest {
					names = append(names, r.op.path)
				}
				fmt.Fprintf(&b, "\nNot attempted: %s", strings.Join(names, ", "))
			}
			return "", errors.New(b.String())
		}
		done = append(done, s.done())
	}
	return "Applied the patch:\n" + strings.Join(done, "\n"), nil
}

// apply makes the step's change, going through os.Root inside the
// location. For a move whose destination was written but whose source could
// not be removed, half says what was done.
func (s patchStep) apply() (half string, err error) {
	if s.remove {
		return "", removeResolved(s.target)
	}
	if _, err := write(s.target, []byte(s.content)); err != nil {
		return "", pathErr(err)
	}
	if s.move {
		if err := removeResolved(s.source); err != nil {
			return "wrote " + s.op.moveTo, fmt.Errorf("%s was written, but %s could not be removed: %w", s.op.moveTo, s.op.path, err)
		}
	}
	return "", nil
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
		return errNoSuchFile
	}
	return pathErr(err)
}
