package builtin

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/stepgate/stepgate/executor"
)

// patchStep is one section's effect on the files, computed before any file
// is written.
type patchStep struct {
	op       patchOp
	target   executor.Path // the file written or deleted: a move's destination
	source   executor.Path // a move's source, removed once target is written
	content  string
	remove   bool     // delete target
	move     bool     // remove source after writing target (another file)
	replaced bool     // an added file that existed
	notes    []string // hunks found by a looser pass than exact
}

// errNoSuchFile: a file to update, move or delete is not there (or an
// earlier section of the patch removed it).
var errNoSuchFile = errors.New("no such file")

// planPatch computes every section's effect in patch order, each section
// seeing the files as the ones before it left them, and writes nothing.
// paths holds each section's resolved path and, for a move, destination.
func planPatch(ops []patchOp, paths [][2]executor.Path) ([]patchStep, error) {
	v := patchView{files: map[string]viewFile{}}
	steps := make([]patchStep, 0, len(ops))
	for i, op := range ops {
		s, err := v.plan(op, paths[i][0], paths[i][1])
		if err != nil {
			return nil, fmt.Errorf("%s failed: %w", sectionName(op), err)
		}
		steps = append(steps, s)
	}
	return steps, nil
}

// viewFile is a file as the sections planned so far leave it.
type viewFile struct {
	name    string // as the patch names it
	content string
	gone    bool
}

// patchView is the location as the sections planned so far leave it: the
// files they touched, by real path, over what is on disk.
type patchView struct {
	files map[string]viewFile
}

func (v *patchView) plan(op patchOp, p, dest executor.Path) (patchStep, error) {
	s := patchStep{op: op, target: p}
	switch op.kind {
	case patchAdd:
		exists, err := v.exists(p)
		if err != nil {
			return s, err
		}
		if err := v.writable(p, op.path); err != nil {
			return s, err
		}
		s.replaced = exists
		s.content = strings.Join(op.lines, "\n")
		if len(op.lines) > 0 {
			s.content += "\n"
		}
		v.files[p.Real] = viewFile{name: op.path, content: s.content}
		return s, nil
	case patchDelete:
		exists, err := v.exists(p)
		if err == nil && !exists {
			err = errNoSuchFile
		}
		if err != nil {
			return s, err
		}
		s.remove = true
		v.files[p.Real] = viewFile{name: op.path, gone: true}
		return s, nil
	}
	content, err := v.read(p)
	if err != nil {
		return s, err
	}
	s.content = content
	if len(op.hunks) > 0 {
		if s.content, s.notes, err = applyHunks(content, op.hunks); err != nil {
			return s, err
		}
	}
	name := op.path
	if op.moveTo != "" && dest.Real != p.Real {
		if _, err := v.exists(dest); err != nil {
			return s, fmt.Errorf("%s: %w", op.moveTo, err)
		}
		if err := v.writable(dest, op.moveTo); err != nil {
			return s, fmt.Errorf("%s: %w", op.moveTo, err)
		}
		s.source, s.target, s.move, name = p, dest, true, op.moveTo
		v.files[p.Real] = viewFile{name: op.path, gone: true}
	}
	v.files[s.target.Real] = viewFile{name: name, content: s.content}
	return s, nil
}

// exists reports whether a regular file is at p; a directory or another
// kind of file there is an error.
func (v *patchView) exists(p executor.Path) (bool, error) {
	if f, ok := v.files[p.Real]; ok {
		return !f.gone, nil
	}
	fi, err := statResolved(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, pathErr(err)
	case fi.IsDir():
		return false, errors.New("it is a directory")
	case !fi.Mode().IsRegular():
		return false, errNotRegular
	}
	return true, nil
}

// read returns the content of the regular file at p.
func (v *patchView) read(p executor.Path) (string, error) {
	exists, err := v.exists(p)
	if err == nil && !exists {
		err = errNoSuchFile
	}
	if err != nil {
		return "", err
	}
	if f, ok := v.files[p.Real]; ok {
		return f.content, nil
	}
	return readResolved(p)
}

// writable refuses a file at p that a file the patch writes would have to
// be a directory of, or that would have to be a directory of one.
func (v *patchView) writable(p executor.Path, name string) error {
	for real, f := range v.files {
		switch {
		case f.gone || real == p.Real:
		case strings.HasPrefix(p.Real, real+string(filepath.Separator)):
			return fmt.Errorf("%s is a file this patch writes, so %s cannot be below it", f.name, name)
		case strings.HasPrefix(real, p.Real+string(filepath.Separator)):
			return fmt.Errorf("this patch writes %s below it, so it cannot be a file", f.name)
		}
	}
	return nil
}

// sectionName names a section in a failure.
func sectionName(op patchOp) string {
	switch {
	case op.kind == patchAdd:
		return "Add " + op.path
	case op.kind == patchDelete:
		return "Delete " + op.path
	case op.moveTo != "":
		return "Move " + op.path + " to " + op.moveTo
	}
	return "Update " + op.path
}

// done names what a step did, in a report.
func (s patchStep) done() string {
	var b strings.Builder
	switch {
	case s.remove:
		b.WriteString("deleted " + s.op.path)
	case s.op.kind == patchAdd && s.replaced:
		b.WriteString("replaced " + s.op.path)
	case s.op.kind == patchAdd:
		b.WriteString("added " + s.op.path)
	case s.op.moveTo != "":
		b.WriteString("moved " + s.op.path + " to " + s.op.moveTo)
	default:
		b.WriteString("updated " + s.op.path)
	}
	if len(s.notes) > 0 {
		b.WriteString(" (" + strings.Join(s.notes, "; ") + ")")
	}
	return b.String()
}
