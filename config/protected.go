package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
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

// protectedPaths reads protected_paths: { add: [...], remove: [...] }. Only
// the user's file may remove a protected path; a project file that tries is
// an error (and the agent is denied everything until it is fixed), never
// ignored.
func (p *reader) protectedPaths(f *File, n ast.Node) error {
	return p.each(n, "protected_paths", func(k string, kn, v ast.Node) error {
		key := "protected_paths." + k
		var into *[]string
		switch k {
		case "add":
			into = &f.ProtectAdd
		case "remove":
			if p.source != gate.SourceUser {
				return p.fail(kn, key, "only the user's file may remove a protected path (this is a %s file)", p.source.Label())
			}
			into = &f.ProtectRemove
		default:
			return p.fail(kn, key, "unknown key (want add or remove)")
		}
		seq, ok := v.(*ast.SequenceNode)
		if !ok {
			return p.fail(v, key, "want a list of path patterns")
		}
		for i, item := range seq.Values {
			ikey := key + "[" + strconv.Itoa(i) + "]"
			s, ok := scalar(item)
			if !ok {
				return p.fail(item, ikey, "want a path pattern")
			}
			if err := gate.CheckPathPattern(s); err != nil {
				return p.fail(item, ikey, "%v", err)
			}
			if into == &f.ProtectRemove && !slices.Contains(DefaultProtectedPaths(), s) {
				return p.fail(item, ikey, "%q is not protected by default (the defaults are %s): remove takes a default as written",
					s, strings.Join(DefaultProtectedPaths(), ", "))
			}
			*into = append(*into, s)
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
