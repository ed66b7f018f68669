package builtin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// inLocation is a path resolved inside a call's location.
type inLocation struct {
	root string // the location's real path (symlinks resolved)
	rel  string // the target's real path relative to root, OS separators, "." for the root
}

// resource is the path as the gate sees it: location-relative, with / separators.
func (p inLocation) resource() string { return filepath.ToSlash(p.rel) }

// resolveInLocation resolves p against location the way spec/tools.md ("Locations")
// says, for tools that stay inside it: a relative path that leaves the location
// lexically is ErrRelativeEscape; one whose real path leaves it through a symlink is
// ErrLocationEscape; an absolute path outside it is ErrExternalPath. The result names
// the real file, so a rule about `secrets/*` cannot be passed by a symlink to it.
//
// A path that does not exist yet resolves through its nearest existing ancestor.
// Checking here does not make opening safe (a symlink may change in between):
// open through os.Root at p.root.
func resolveInLocation(location, p string) (inLocation, error) {
	if location == "" || !filepath.IsAbs(location) {
		return inLocation{}, fmt.Errorf("%w: the call's location %q is not an absolute path", ErrNoLocation, location)
	}
	loc := filepath.Clean(location)
	root, err := filepath.EvalSymlinks(loc)
	if err != nil {
		return inLocation{}, fmt.Errorf("%w: %v", ErrNoLocation, err)
	}
	if p == "" {
		return inLocation{}, errors.New("path is empty")
	}
	var abs string
	if filepath.IsAbs(p) {
		abs = filepath.Clean(p)
		if !within(loc, abs) && !within(root, abs) {
			return inLocation{}, fmt.Errorf("%w: absolute path %q is outside the location", ErrExternalPath, p)
		}
	} else {
		abs = filepath.Join(loc, p)
		if !within(loc, abs) {
			return inLocation{}, fmt.Errorf("%w: path %q leaves the location", ErrRelativeEscape, p)
		}
	}
	real, notDir, err := realPath(abs)
	if notDir != "" {
		return inLocation{}, fmt.Errorf("%w: path %q: %s is not a directory", ErrNonDirectoryAncestor, p, relName(root, notDir))
	}
	if err != nil {
		return inLocation{}, fmt.Errorf("path %q: %w", p, pathErr(err))
	}
	if !within(root, real) {
		return inLocation{}, fmt.Errorf("%w: path %q resolves outside the location through a symlink", ErrLocationEscape, p)
	}
	rel, err := filepath.Rel(root, real)
	if err != nil {
		return inLocation{}, fmt.Errorf("path %q: %w", p, err)
	}
	return inLocation{root: root, rel: rel}, nil
}

// realPath resolves the symlinks of abs's nearest existing ancestor and appends the
// rest, which does not exist yet. If that ancestor is not a directory, notDir is its
// real path.
func realPath(abs string) (real, notDir string, err error) {
	var rest []string
	for cur := abs; ; {
		found, err := filepath.EvalSymlinks(cur)
		if err == nil {
			if len(rest) > 0 {
				fi, err := os.Stat(found)
				if err != nil {
					return "", "", err
				}
				if !fi.IsDir() {
					return "", found, nil
				}
			}
			slices.Reverse(rest)
			return filepath.Join(append([]string{found}, rest...)...), "", nil
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return "", "", err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return "", "", err
		}
		rest = append(rest, filepath.Base(cur))
		cur = parent
	}
}

// relName names path for the model: relative to root when inside it, else its base name.
func relName(root, path string) string {
	if within(root, path) {
		if rel, err := filepath.Rel(root, path); err == nil {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.Base(path)
}

// within reports whether path is dir or below it; both are clean and absolute.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
