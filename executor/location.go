package executor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/stepgate/stepgate/descriptor"
)

// Path is a path a tool touches, resolved against the run's location.
type Path struct {
	// Root is the location's real path.
	Root string
	// Real is the target's real path: symlinks of its existing part resolved,
	// the part that does not exist yet appended.
	Real string
	// Rel is Real relative to Root (OS separators, "." for the root); empty
	// for an external path.
	Rel string
	// External marks an absolute path outside the location: allowed only
	// after the external_directory request of Requests.
	External bool
	// Dir is, for an external path, the directory that request names.
	Dir string
}

// Resource is the path as the gate sees it: location-relative with /
// separators inside the location, the canonical absolute path outside.
func (p Path) Resource() string {
	if p.External {
		return filepath.ToSlash(p.Real)
	}
	return filepath.ToSlash(p.Rel)
}

// Requests returns what touching p needs beyond the tool's own request: for
// an external path, external_directory on <dir>/* (saved as <dir>/*);
// nothing inside the location.
func (p Path) Requests() []descriptor.Request {
	if !p.External {
		return nil
	}
	pattern := filepath.ToSlash(filepath.Join(p.Dir, "*"))
	return []descriptor.Request{{Action: "external_directory", Resources: []string{pattern}, Save: []string{pattern}}}
}

// Resolve resolves path against location as spec/tools.md ("Locations")
// says. A relative path that leaves the location lexically is
// ErrRelativeEscape; a path inside it lexically whose real path (after
// symlinks) is outside is ErrLocationEscape; a path whose nearest existing
// ancestor is not a directory is ErrNonDirectoryAncestor; an empty path or
// one holding NUL or a newline is ErrBadPath; a path through /proc, /dev/fd
// or the standard streams' names, lexically or by a symlink, is
// ErrProcessPath (see IsProcessPath). An absolute path outside the
// location resolves as External, its Dir the path itself when it is an
// existing directory and the tool asked for one (wantDir), else its parent.
// A path that does not exist yet resolves through its nearest existing
// ancestor.
//
// Resolving is a check at one moment: a tool resolves again when it runs and
// opens inside the location through os.Root at Root, so a symlink swapped in
// between cannot lead it out.
func Resolve(location, path string, wantDir bool) (Path, error) {
	if location == "" || !filepath.IsAbs(location) {
		return Path{}, fmt.Errorf("%w: the call's location %q is not an absolute path", ErrNoLocation, location)
	}
	loc := filepath.Clean(location)
	root, err := filepath.EvalSymlinks(loc)
	if err != nil {
		return Path{}, fmt.Errorf("%w: %v", ErrNoLocation, err)
	}
	if path == "" || strings.ContainsAny(path, "\x00\n\r") {
		return Path{}, fmt.Errorf("%w: %q", ErrBadPath, path)
	}
	var abs string
	external := false
	if filepath.IsAbs(path) {
		abs = filepath.Clean(path)
		external = !within(loc, abs) && !within(root, abs)
	} else {
		abs = filepath.Join(loc, path)
		if !within(loc, abs) {
			return Path{}, fmt.Errorf("%w: path %q leaves the location", ErrRelativeEscape, path)
		}
	}
	if processPathThrough(abs) {
		return Path{}, fmt.Errorf("%w: path %q goes through /proc, /dev/fd or a standard stream's name, which name a file as one process sees it: name the file by its own path", ErrProcessPath, path)
	}
	real, notDir, err := realPath(abs)
	if notDir != "" {
		return Path{}, fmt.Errorf("%w: path %q: %s is not a directory", ErrNonDirectoryAncestor, path, relName(root, notDir))
	}
	if err != nil {
		return Path{}, fmt.Errorf("path %q: %w", path, err)
	}
	if external {
		dir := filepath.Dir(real)
		if fi, err := os.Stat(real); wantDir && err == nil && fi.IsDir() {
			dir = real
		}
		return Path{Root: root, Real: real, External: true, Dir: dir}, nil
	}
	if !within(root, real) {
		return Path{}, fmt.Errorf("%w: path %q resolves outside the location through a symlink", ErrLocationEscape, path)
	}
	rel, err := filepath.Rel(root, real)
	if err != nil {
		return Path{}, fmt.Errorf("path %q: %w", path, err)
	}
	return Path{Root: root, Real: real, Rel: rel}, nil
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
