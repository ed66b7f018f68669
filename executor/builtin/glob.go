package builtin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
)

// GlobDefaultLimit is how many paths glob returns unless asked for fewer.
const GlobDefaultLimit = 100

// GlobInput is the input of glob.
type GlobInput struct {
	Pattern string `json:"pattern" jsonschema:"description=A glob pattern; ** matches any number of directories"`
	Path    string `json:"path,omitempty" jsonschema:"description=The directory to search (default: the workspace root)"`
	Limit   int    `json:"limit,omitempty" jsonschema:"description=At most this many paths (default 100)"`
}

// Glob builds glob: the files under a directory matching a pattern (with
// **), newest first. Permission: glob on the pattern (and
// external_directory for a directory outside the location).
func Glob() (*executor.Tool, error) {
	return executor.New("glob",
		"Find files by name with a glob pattern (* and ? match within one path segment, [abc] a class, {a,b} alternatives (at most 8 groups), ** any number of directories, none included). path is the directory to search (default: the workspace); a path naming a file is an error. Returns files (not directories) relative to the workspace, most recently modified first, at most limit (default 100).",
		globFiles, executor.WithEffect(descriptor.ReadOnly),
		executor.WithRequests(func(c executor.Call, in GlobInput) ([]descriptor.Request, error) {
			if err := checkGlob("pattern", in.Pattern); err != nil {
				return nil, err
			}
			if dir, err := resolveDir(c, in.Path); err == nil {
				if fi, err := os.Stat(dir.Real); err == nil && !fi.IsDir() {
					return nil, globOfFile(in.Path)
				}
			}
			return searchRequests(c, in.Path, "glob", in.Pattern)
		}))
}

// globOfFile refuses a glob whose path names a file: glob searches a
// directory.
func globOfFile(path string) error {
	return fmt.Errorf("path %s is a file, not a directory: glob searches a directory (give the directory in path and the file name in pattern, or read the file)", path)
}

// resolveDir resolves a directory argument of a call: the location itself
// when it is empty.
func resolveDir(c executor.Call, path string) (executor.Path, error) {
	if path == "" {
		path = "."
	}
	return c.Resolve(path, true)
}

// shownPath is how a file found under dir, at rel below it, is shown to
// the model: relative to the location inside it, absolute outside.
func shownPath(dir executor.Path, rel string) string {
	shown := filepath.Join(dir.Real, rel)
	if !dir.External {
		shown, _ = filepath.Rel(dir.Root, shown)
	}
	return filepath.ToSlash(shown)
}

// searchRequests are what a search under path asks: action on the pattern
// (saved as "*"), after external_directory for a directory outside the
// location.
func searchRequests(c executor.Call, path, action, pattern string) ([]descriptor.Request, error) {
	dir, err := resolveDir(c, path)
	if err != nil {
		return nil, err
	}
	return append(dir.Requests(), descriptor.Request{Action: action, Resources: []string{pattern}, Save: []string{"*"}}), nil
}

func globFiles(_ context.Context, c executor.Call, in GlobInput) (string, error) {
	dir, err := resolveDir(c, in.Path)
	if err != nil {
		return "", err
	}
	type hit struct {
		path string
		mod  time.Time
	}
	var hits []hit
	root, start, err := searchRoot(dir)
	if err != nil {
		return "No files found", nil // gone: nothing under it
	}
	defer root.Close()
	if start != "." {
		return "", globOfFile(in.Path)
	}
	tree := newTreeFS(root)
	tree.hide = hiddenIn(c, root)
	err = doublestar.GlobWalk(tree, in.Pattern, func(p string, d fs.DirEntry) error {
		if tree.hide != nil && tree.hide(p) {
			return nil
		}
		if fi, ok := fileIn(root, p, d); ok {
			hits = append(hits, hit{path: p, mod: fi.ModTime()})
		}
		return nil
	}, doublestar.WithNoFollow())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("glob %s: %v", in.Pattern, err)
	}
	slices.SortFunc(hits, func(a, b hit) int {
		if c := b.mod.Compare(a.mod); c != 0 {
			return c
		}
		return strings.Compare(a.path, b.path)
	})
	limit := in.Limit
	if limit <= 0 {
		limit = GlobDefaultLimit
	}
	var out []string
	for i, h := range hits {
		if i == limit {
			out = append(out, fmt.Sprintf("(%d more not shown: narrow the pattern or raise limit)", len(hits)-limit))
			break
		}
		out = append(out, shownPath(dir, h.path))
	}
	if len(out) == 0 {
		return "No files found", nil
	}
	return strings.Join(out, "\n"), nil
}
