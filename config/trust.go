package config

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/stepgate/stepgate/gate"
)

// Trusted projects.
//
// A project's file is untrusted input: a cloned repository must not grant
// itself authority. So its layer only narrows (see [Resolve]) unless the
// user's file names the project's location in trusted_projects, as
// mcp_project_servers names the project servers the host may start. A
// trusted project's layer is what every layer is: its rules come after the
// user's and, last-match-wins, override them.

// trustedProjects is trusted_projects: the locations whose project file is
// a layer like the user's, as absolute directories ("~" or "$HOME" first
// for the home directory). The user's file only.
type trustedProjects struct {
	dirs []string
}

func (tp *trustedProjects) decode(s state, n ast.Node) error {
	if s.source != gate.SourceUser {
		return s.failKey("only the user's file may trust a project (this is a %s file)", s.source.Label())
	}
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		return s.fail(n, "want a list of directories")
	}
	for i, item := range seq.Values {
		is := s.index(i)
		text, ok := scalar(item)
		if !ok || text == "" {
			return is.fail(item, "want a directory")
		}
		dir, err := trustedDir(is, item, text)
		if err != nil {
			return err
		}
		tp.dirs = append(tp.dirs, dir)
	}
	return nil
}

// trustedDir is the directory text names, cleaned, its home reference
// expanded: it must be absolute and hold no wildcard (a trust names one
// project, as mcp_project_servers names one server) and no NUL.
func trustedDir(s state, n ast.Node, text string) (string, error) {
	if strings.ContainsAny(text, "*?[\x00") {
		return "", s.fail(n, "%q: want a directory, without wildcards (each trusted project is named)", text)
	}
	dir := text
	if _, ok := gate.HomeRef(text); ok {
		var ok bool
		if dir, ok = gate.ExpandHome(text, Home()); !ok {
			return "", s.fail(n, "%q names the home directory, and there is none (HOME is not set or not absolute)", text)
		}
	}
	if !filepath.IsAbs(dir) {
		return "", s.fail(n, "%q: want an absolute directory (or one under ~)", text)
	}
	return filepath.Clean(dir), nil
}

// trusts reports whether location is one of dirs: the same path, cleaned
// and absolute, or the same directory once symlinks are resolved.
func trusts(dirs []string, location string) bool {
	if len(dirs) == 0 {
		return false
	}
	loc, err := filepath.Abs(location)
	if err != nil {
		return false
	}
	if slices.Contains(dirs, loc) {
		return true
	}
	real, err := filepath.EvalSymlinks(loc)
	if err != nil {
		return false
	}
	for _, d := range dirs {
		if rd, err := filepath.EvalSymlinks(d); err == nil && rd == real {
			return true
		}
	}
	return false
}

// narrows reports whether f is a project layer the user's file does not
// trust: its rules narrow only, and so do its agents' ticket_ttl and its
// tool_output bounds.
func (f *File) narrows() bool { return f.source == gate.SourceProject && !f.trusted }

// TrustProject returns a copy of f, a project layer, that layers as the
// user's does — what trusted_projects makes of the project file of a
// location it names — for a caller that assembles layers itself (see
// [Resolve]). Any other layer is returned as it is.
func (f *File) TrustProject() *File {
	if f.source != gate.SourceProject {
		return f
	}
	t := *f
	t.trusted = true
	return &t
}
