package executor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// filePrefix begins the name of every file the store spills to.
const filePrefix = "tool_"

// PathOf is the path of the store's file for id: tool_<id> in its
// directory.
func (s *OutputStore) PathOf(id string) string { return filepath.Join(s.dir, filePrefix+id) }

// OutputFile is a spilled output file found in the store's directory.
type OutputFile struct {
	Path string
	// Modified is the file's modification time; zero when the file could
	// not be looked at (it went away after it was listed).
	Modified time.Time
}

// Files lists the spilled output files in the store's directory: the
// regular files named tool_<id>, in name order. A directory that does not
// exist holds none.
func (s *OutputStore) Files() ([]OutputFile, error) {
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", s.dir, err)
	}
	var files []OutputFile
	for _, ent := range entries {
		if !ent.Type().IsRegular() || !strings.HasPrefix(ent.Name(), filePrefix) {
			continue
		}
		f := OutputFile{Path: filepath.Join(s.dir, ent.Name())}
		if info, err := ent.Info(); err == nil {
			f.Modified = info.ModTime()
		}
		files = append(files, f)
	}
	return files, nil
}

// Remove deletes a spilled output file; one that is gone already is not an
// error.
func (s *OutputStore) Remove(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// Gone reports whether path names a file of the store's directory that no
// longer exists (a file recorded as spilled that was deleted since).
func (s *OutputStore) Gone(path string) bool {
	if filepath.Dir(path) != s.dir {
		return false
	}
	_, err := os.Stat(path)
	return errors.Is(err, os.ErrNotExist)
}
