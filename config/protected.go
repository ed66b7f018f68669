package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/stepgate/stepgate/gate"
)

// ProtectedAction is the action protections cover: every tool that writes a
// file (write, edit, apply_patch, bash's output redirections) raises an edit
// request on the path it writes.
const ProtectedAction = "edit"

// DefaultProtectedPaths are the paths protected in every location unless the
// user's file removes them: .stepgate/** (the project configuration the
// engine reads, .stepgate/config.yaml, and the skills beside it) and
// .git/** (git's configuration and hooks, the configuration and hooks of
// submodules under .git/modules and of linked worktrees: whatever is written
// there runs at the next git command), and a .git file (a "gitdir:" link
// that points git at another directory) because "**" also takes no segment.
// An unanchored pattern matches at any depth (see [gate.MatchPath]), so
// nested repositories and other locations reached through external_directory
// are covered too.
func DefaultProtectedPaths() []string { return []string{".stepgate/**", ".git/**"} }

// protectedPaths is protected_paths: { add: [...], remove: [...] }. Only
// the user's file may remove a protected path; a project file that tries is
// an error (and the agent is denied everything until it is fixed), never
// ignored.
type protectedPaths struct {
	// Path patterns protected besides the defaults (.git/**, .stepgate/**).
	Add pathPatterns `yaml:"add"`
	// Defaults, as written, that are no longer protected (the user's file
	// only).
	Remove removals `yaml:"remove"`
}

func (p *protectedPaths) decode(s state, n ast.Node) error {
	return fields(s, n, p, "unknown key (want add or remove)")
}

// pathPatterns is a list of path patterns (see gate.MatchPath).
type pathPatterns []string

func (ps *pathPatterns) decode(s state, n ast.Node) error {
	return ps.read(s, n, func(state, ast.Node, string) error { return nil })
}

// read appends the patterns of the list n, each also passing check.
func (ps *pathPatterns) read(s state, n ast.Node, check func(s state, item ast.Node, pat string) error) error {
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		return s.fail(n, "want a list of path patterns")
	}
	for i, item := range seq.Values {
		is := s.index(i)
		pat, ok := scalar(item)
		if !ok {
			return is.fail(item, "want a path pattern")
		}
		if err := gate.CheckPathPattern(pat); err != nil {
			return is.fail(item, "%v", err)
		}
		if err := check(is, item, pat); err != nil {
			return err
		}
		*ps = append(*ps, pat)
	}
	return nil
}

// removals is protected_paths.remove: defaults, as written, that the user's
// file no longer protects.
type removals struct{ paths pathPatterns }

func (r *removals) decode(s state, n ast.Node) error {
	if s.source != gate.SourceUser {
		return s.failKey("only the user's file may remove a protected path (this is a %s file)", s.source.Label())
	}
	return r.paths.read(s, n, func(s state, item ast.Node, pat string) error {
		if !slices.Contains(DefaultProtectedPaths(), pat) {
			return s.fail(item, "%q is not protected by default (the defaults are %s): remove takes a default as written",
				pat, strings.Join(DefaultProtectedPaths(), ", "))
		}
		return nil
	})
}

// protections folds the layers' protected paths: the built-in defaults
// less the user's removals, every layer's additions (a layer may always
// protect more), then what is always protected.
func protections(layers []*File) []string {
	var remove []string
	for _, f := range layers {
		remove = append(remove, f.ProtectRemove...)
	}
	var out []string
	add := func(p string) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, f := range layers {
		for _, p := range f.ProtectAdd {
			if f.Path != "" || !slices.Contains(remove, p) { // removals apply to the built-in defaults
				add(p)
			}
		}
	}
	for _, f := range layers {
		for _, p := range f.alwaysProtected {
			add(p)
		}
	}
	return out
}

// protectionRules turns protected paths into the rules the gate applies.
func protectionRules(paths []string) gate.Ruleset {
	rs := make(gate.Ruleset, len(paths))
	for i, p := range paths {
		rs[i] = gate.Rule{Action: ProtectedAction, Resource: p, Effect: gate.Ask, Source: gate.SourceProtected}
	}
	return rs
}

// userFileProtection is the user's configuration file as anchored patterns
// (the path, and its real path through symlinks, also relative to the
// location when it lies inside): the one file no agent may write without
// asking, whatever the user's file says.
func userFileProtection(userFile, location string) []string {
	if userFile == "" {
		return nil
	}
	abs, err := filepath.Abs(userFile)
	if err != nil {
		return nil
	}
	cands := []string{abs}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		cands = append(cands, filepath.Join(dir, filepath.Base(abs)))
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		cands = append(cands, real)
	}
	root, rootErr := filepath.EvalSymlinks(location)
	var out []string
	add := func(p string) {
		p = "/" + strings.TrimLeft(filepath.ToSlash(p), "/")
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, c := range cands {
		add(c)
		if rootErr != nil {
			continue
		}
		for _, base := range []string{root, location} {
			if rel, err := filepath.Rel(base, c); err == nil && rel != "." && filepath.IsLocal(rel) {
				add(rel)
			}
		}
	}
	return out
}

// plainProjectFile refuses a project configuration reached through a
// symlink (.stepgate or .stepgate/config.yaml): writes are protected at the
// path they resolve to, so a link would let an unprotected file be read as
// configuration.
func plainProjectFile(location string) error {
	for _, p := range []string{filepath.Join(location, ".stepgate"), ProjectFile(location)} {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read configuration %s: %w: %w", p, ErrInvalid, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return &Error{File: ProjectFile(location), Key: "(file)",
				Msg: fmt.Sprintf("%s is a symbolic link: the project configuration must be a plain file in the location, where it is protected", filepath.Base(p))}
		}
	}
	return nil
}
