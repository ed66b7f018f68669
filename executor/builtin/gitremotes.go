package builtin

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// gitConfigLimit bounds the repository configuration read to find a
// remote's name: a larger file is not read (the word then asks).
const gitConfigLimit = 1 << 20

// gitRemoteConfigured reports whether name is a remote of the repository
// that git run in dir would find: a `[remote "name"]` section of its
// config (of the main repository for a linked worktree). A word that is
// not — the repository cannot be found or read, or the remote is defined
// only elsewhere (an include, the user's file) — is a path to git, and
// asks: a directory of that name may be a repository the command itself
// creates before it pushes there.
func gitRemoteConfigured(dir, name string) bool {
	gitDir := findGitDir(dir)
	if gitDir == "" {
		return false
	}
	if b, err := readSmall(filepath.Join(gitDir, "commondir")); err == nil {
		common := strings.TrimSpace(string(b))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
		gitDir = common
	}
	b, err := readSmall(filepath.Join(gitDir, "config"))
	if err != nil {
		return false
	}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	sc.Buffer(nil, gitConfigLimit)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		i := strings.IndexByte(line, ']')
		if !strings.HasPrefix(line, "[") || i < 0 {
			continue
		}
		sec, sub, ok := strings.Cut(line[1:i], " ")
		if ok && strings.EqualFold(sec, "remote") && strings.TrimSpace(sub) == `"`+name+`"` {
			return true
		}
	}
	return false
}

// findGitDir returns the git directory git finds from dir upwards: a .git
// directory, or the one a .git file names (gitdir: …); "" for none.
func findGitDir(dir string) string {
	for d := dir; ; {
		p := filepath.Join(d, ".git")
		if fi, err := os.Lstat(p); err == nil {
			switch {
			case fi.IsDir():
				return p
			case fi.Mode().IsRegular():
				b, err := readSmall(p)
				if err != nil {
					return ""
				}
				g, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
				if !ok {
					return ""
				}
				if g = strings.TrimSpace(g); !filepath.IsAbs(g) {
					g = filepath.Join(d, g)
				}
				return g
			default:
				return ""
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// readSmall reads a regular file of at most gitConfigLimit bytes, never
// waiting on a FIFO or a device.
func readSmall(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() > gitConfigLimit {
		return nil, os.ErrInvalid
	}
	return io.ReadAll(io.LimitReader(f, gitConfigLimit))
}
