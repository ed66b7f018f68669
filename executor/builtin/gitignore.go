package builtin

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// ignoreRule is one line of a .gitignore file.
type ignoreRule struct {
	base     string // the directory of the .gitignore, slash-separated, relative to the search root ("" for the root)
	pattern  string
	negate   bool
	dirOnly  bool
	anchored bool // contains a slash: matched against the path below base
}

// ignorer is the .gitignore files found while walking, deepest last.
type ignorer struct{ rules []ignoreRule }

// load reads dir/.gitignore (dir relative to root, slash-separated), inside
// root: a .gitignore that is a symlink out of root is not read.
func (g *ignorer) load(root *os.Root, dir string) {
	f, err := openRegular(root, path.Join(dir, ".gitignore"))
	if err != nil {
		return
	}
	defer f.Close()
	g.parse(dir, f)
}

// parse adds the rules of one .gitignore read from r, found in dir.
func (g *ignorer) parse(dir string, r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " \t")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		rule := ignoreRule{base: dir}
		if strings.HasPrefix(line, "!") {
			rule.negate, line = true, line[1:]
		}
		if strings.HasSuffix(line, "/") {
			rule.dirOnly, line = true, strings.TrimSuffix(line, "/")
		}
		if strings.Contains(line, "/") {
			rule.anchored, line = true, strings.TrimPrefix(line, "/")
		}
		rule.pattern = literalBraces(line)
		g.rules = append(g.rules, rule)
	}
}

// ignored reports whether rel (slash-separated, relative to the root) is
// ignored; the last matching rule decides, as in git.
func (g *ignorer) ignored(rel string, isDir bool) bool {
	ignored := false
	for _, r := range g.rules {
		if r.dirOnly && !isDir {
			continue
		}
		below := rel
		if r.base != "" {
			if !strings.HasPrefix(rel, r.base+"/") {
				continue
			}
			below = strings.TrimPrefix(rel, r.base+"/")
		}
		var ok bool
		if r.anchored {
			ok, _ = doublestar.Match(r.pattern, below)
		} else {
			ok, _ = doublestar.Match(r.pattern, path.Base(below))
		}
		if ok {
			ignored = !r.negate
		}
	}
	return ignored
}

// literalBraces escapes { and } so doublestar matches them literally: git
// does not expand braces, and a crafted brace pattern would make matching
// exponential.
func literalBraces(p string) string {
	var b strings.Builder
	escaped := false
	for _, r := range p {
		if (r == '{' || r == '}') && !escaped {
			b.WriteByte('\\')
		}
		escaped = r == '\\' && !escaped
		b.WriteRune(r)
	}
	return b.String()
}

// maxBraceGroups bounds the {a,b} groups in a model-supplied glob: matching
// cost grows exponentially with them and a match cannot be interrupted.
const maxBraceGroups = 8

// checkGlob reports why pattern cannot be used as a glob, or nil.
func checkGlob(field, pattern string) error {
	if !doublestar.ValidatePattern(pattern) {
		return fmt.Errorf("%s %q is not a valid glob", field, pattern)
	}
	if n := strings.Count(pattern, "{"); n > maxBraceGroups {
		return fmt.Errorf("%s %q has %d brace groups; at most %d are allowed", field, pattern, n, maxBraceGroups)
	}
	return nil
}
