package builtin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/stepgate/stepgate/executor"
)

// searchRoot opens the directory a search (glob, grep) walks as an os.Root,
// so that every directory the walk enters and every file it opens is
// resolved inside it: a symlink that leads out — to outside the location,
// or out of the approved external directory — is refused by the root, even
// one swapped in while the walk runs, and symlinks that stay inside lead
// where they point. When dir is a file, the root is its directory and start
// names the file in it; else start is ".".
func searchRoot(dir executor.Path) (root *os.Root, start string, err error) {
	root, err = os.OpenRoot(dir.Real)
	if err == nil {
		return root, ".", nil
	}
	if fi, serr := os.Stat(dir.Real); serr != nil || fi.IsDir() {
		return nil, "", err
	}
	root, err = os.OpenRoot(filepath.Dir(dir.Real))
	return root, filepath.Base(dir.Real), err
}

// fileIn returns the info of an entry the walk of root found at name when
// it is a file of the search: not a directory, and, for a symlink, one that
// leads to a file inside root (a symlink out of root, to nowhere, or to a
// directory is not listed; directories are entered by the walk itself).
func fileIn(root *os.Root, name string, d fs.DirEntry) (fs.FileInfo, bool) {
	if d.IsDir() {
		return nil, false
	}
	var fi fs.FileInfo
	var err error
	if d.Type()&fs.ModeSymlink != 0 {
		fi, err = root.Stat(name)
	} else {
		fi, err = d.Info()
	}
	if err != nil || fi.IsDir() {
		return nil, false // gone since it was listed, or not a file of root
	}
	return fi, true
}

// errNotRegularFile: what a search was about to read is not a regular file.
var errNotRegularFile = errors.New("not a regular file")

// openRegular opens the regular file name inside root for reading. It opens
// without blocking (a FIFO swapped in after the walk listed a file must not
// hang the search) and refuses anything that is not a regular file then.
func openRegular(root *os.Root, name string) (*os.File, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s: %w", name, errNotRegularFile)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// hiddenIn returns what a search of root hides for the call c: the names
// (relative to root, / separated) whose path, as written and after
// symlinks, the call's sandbox denies reading (see Call.Hidden); nil
// without a sandbox that denies anything, so a search without one pays
// nothing.
func hiddenIn(c executor.Call, root *os.Root) func(name string) bool {
	if c.Sandbox == nil || len(c.Sandbox.Denied) == 0 {
		return nil
	}
	return func(name string) bool {
		abs := filepath.Join(root.Name(), filepath.FromSlash(name))
		if c.Hidden(abs) {
			return true
		}
		real, err := filepath.EvalSymlinks(abs)
		return err == nil && c.Hidden(real)
	}
}
