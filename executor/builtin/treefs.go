package builtin

import (
	"io/fs"
	"os"
	"path"
	"slices"
)

// treeFS is the file system a glob walks: root's files, through symlinks
// that stay inside root (os.Root refuses the others), except a symlinked
// directory that leads back to a directory the path already went through —
// a loop, which a pattern of many `*` segments could otherwise walk round
// and round, multiplying the paths it visits. Such a symlink is not there
// (fs.ErrNotExist). Paths with a loop or one that leads out are the only
// ones refused.
//
// A treeFS serves one walk on one goroutine: it remembers the directories
// it checked, and is not safe for concurrent use.
type treeFS struct {
	root *os.Root
	fsys fs.FS
	dirs map[string]*treeDir // checked directories by path; "." is root
	// hide, when set, names what the call's sandbox denies (see hiddenIn):
	// such a path is not there.
	hide func(name string) bool
}

// treeDir is one directory a path went through, and the one before it.
// Its info is read when a symlink below it is compared with it, from the
// entry ReadDir listed it by, or given when it was found by Lstat.
type treeDir struct {
	entry fs.DirEntry
	info  fs.FileInfo
	up    *treeDir
}

// sameAs reports whether d is the directory info describes.
func (d *treeDir) sameAs(info fs.FileInfo) bool {
	if d.info == nil {
		var err error
		if d.info, err = d.entry.Info(); err != nil {
			return false
		}
	}
	return os.SameFile(d.info, info)
}

// newTreeFS returns the treeFS of root.
func newTreeFS(root *os.Root) *treeFS {
	return &treeFS{root: root, fsys: root.FS(), dirs: map[string]*treeDir{}}
}

// Open implements fs.FS.
func (t *treeFS) Open(name string) (fs.File, error) {
	if err := t.check("open", name); err != nil {
		return nil, err
	}
	return t.fsys.Open(name)
}

// Stat implements fs.StatFS.
func (t *treeFS) Stat(name string) (fs.FileInfo, error) {
	if err := t.check("stat", name); err != nil {
		return nil, err
	}
	return fs.Stat(t.fsys, name)
}

// ReadDir implements fs.ReadDirFS.
func (t *treeFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	d, err := t.dir("readdir", name)
	if err != nil {
		return nil, err
	}
	entries, err := fs.ReadDir(t.fsys, name)
	if d == nil {
		return entries, err // not a directory: fs.ReadDir says so
	}
	if t.hide != nil {
		entries = slices.DeleteFunc(entries, func(e fs.DirEntry) bool { return t.hide(path.Join(name, e.Name())) })
	}
	for _, e := range entries { // its directories (not symlinks) need no Lstat of their own
		if e.IsDir() {
			t.dirs[path.Join(name, e.Name())] = &treeDir{entry: e, up: d}
		}
	}
	return entries, err
}

// check refuses name when a directory on its way (name included) is a
// symlink to a directory the way already went through.
func (t *treeFS) check(op, name string) error {
	if !fs.ValidPath(name) {
		return &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	if t.hide != nil && t.hide(name) {
		return &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	_, err := t.dir(op, name)
	return err
}

// dir returns the chain of directories that leads to name, checking each
// part of it once; nil (and no error) when name is not a directory.
func (t *treeFS) dir(op, name string) (*treeDir, error) {
	if d, ok := t.dirs[name]; ok {
		return d, nil
	}
	var up *treeDir
	if name != "." {
		var err error
		if up, err = t.dir(op, path.Dir(name)); err != nil {
			return nil, err
		}
		if up == nil {
			return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist} // below a file
		}
	}
	info, err := t.root.Lstat(name)
	if err != nil {
		return nil, err
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		if info, err = t.root.Stat(name); err != nil {
			return nil, err // leads out of root, or nowhere
		}
		for d := up; d != nil; d = d.up {
			if info.IsDir() && d.sameAs(info) {
				return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist} // a loop
			}
		}
	}
	if !info.IsDir() {
		return nil, nil
	}
	d := &treeDir{info: info, up: up}
	t.dirs[name] = d
	return d, nil
}
