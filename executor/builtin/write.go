package builtin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
)

// WriteInput is the input of write.
type WriteInput struct {
	Path    string `json:"path" jsonschema:"description=The file to write (relative to the workspace, or absolute)"`
	Content string `json:"content" jsonschema:"description=The whole new content of the file"`
}

// Write builds write: it creates or replaces a file, creating its parent
// directories, and says which it did. Permission: edit on the path (saved
// as "*"), and external_directory first for a path outside the location.
func Write() (*executor.Tool, error) {
	return executor.New("write",
		"Write a file: create it (and its parent directories) or replace its whole content. Says whether it created or overwrote the file.",
		writeFile, executor.WithEffect(descriptor.SideEffecting),
		executor.WithRequests(func(c executor.Call, in WriteInput) ([]descriptor.Request, error) {
			return editRequests(c, in.Path)
		}))
}

// editRequests are what changing one file asks: edit on its path (saved as
// "*"), after external_directory for a path outside the location.
func editRequests(c executor.Call, path string) ([]descriptor.Request, error) {
	return pathRequests(c, path, "edit", false)
}

// pathRequests are what a call on one path asks: action on the path (saved
// as "*"), after external_directory for a path outside the location.
func pathRequests(c executor.Call, path, action string, wantDir bool) ([]descriptor.Request, error) {
	p, err := c.Resolve(path, wantDir)
	if err != nil {
		return nil, err
	}
	return append(p.Requests(), descriptor.Request{Action: action, Resources: []string{p.Resource()}, Save: []string{"*"}}), nil
}

func writeFile(_ context.Context, c executor.Call, in WriteInput) (string, error) {
	p, err := c.ResolveWrite(in.Path, false) // again: time has passed since the decision
	if err != nil {
		return "", err
	}
	existed, err := write(p, []byte(in.Content))
	if err != nil {
		return "", fmt.Errorf("cannot write %s: %v", in.Path, pathErr(err))
	}
	verb := "Created"
	if existed {
		verb = "Overwrote"
	}
	return fmt.Sprintf("%s %s (%d bytes)", verb, in.Path, len(in.Content)), nil
}

// write writes data at p: inside the location through os.Root (no symlink
// leads out, whatever changed since the check), outside it at the real path
// the external_directory request named.
func write(p executor.Path, data []byte) (existed bool, err error) {
	if p.External {
		_, statErr := os.Stat(p.Real)
		if err := os.MkdirAll(filepath.Dir(p.Real), 0o755); err != nil {
			return false, err
		}
		return statErr == nil, os.WriteFile(p.Real, data, 0o644)
	}
	root, err := os.OpenRoot(p.Root)
	if err != nil {
		return false, err
	}
	defer root.Close()
	fi, statErr := root.Stat(p.Rel)
	if statErr == nil && fi.IsDir() {
		return false, fmt.Errorf("%s is a directory", p.Rel)
	}
	if statErr != nil && !errors.Is(statErr, fs.ErrNotExist) {
		return false, statErr
	}
	if err := root.MkdirAll(filepath.Dir(p.Rel), 0o755); err != nil {
		return false, err
	}
	return statErr == nil, root.WriteFile(p.Rel, data, 0o644)
}
