package doccheck

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// root is the repository, from this package's directory.
const root = "../.."

var (
	linkRE    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	headingRE = regexp.MustCompile(`^(#+) (.*)`)
	dropRE    = regexp.MustCompile(`[^\p{L}\p{N}\- _]`)
)

// page is one Markdown file: its links and the anchors of its headings.
type page struct {
	lines   int
	links   []string
	anchors map[string]bool
}

// anchor is the fragment GitHub gives a heading: lower case, punctuation
// dropped, spaces as hyphens.
func anchor(heading string) string {
	h := strings.ToLower(strings.TrimSpace(heading))
	h = dropRE.ReplaceAllString(h, "")
	return strings.ReplaceAll(h, " ", "-")
}

func read(t *testing.T, path string) page {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := page{anchors: map[string]bool{}}
	fence := false
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		p.lines++
		if strings.HasPrefix(line, "```") {
			fence = !fence
			continue
		}
		if fence {
			continue
		}
		if m := headingRE.FindStringSubmatch(line); m != nil {
			p.anchors[anchor(m[2])] = true
		}
		for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
			p.links = append(p.links, m[1])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return p
}

// docs reads README.md, llms.txt and every Markdown page under docs/, by
// path relative to the repository.
func docs(t *testing.T) map[string]page {
	t.Helper()
	pages := map[string]page{"README.md": read(t, filepath.Join(root, "README.md")), "llms.txt": read(t, filepath.Join(root, "llms.txt"))}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".md") {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		pages[filepath.ToSlash(rel)] = read(t, path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pages
}

// resolve is a relative link's target page and anchor, from page from.
func resolve(from, link string) (target, frag string, ok bool) {
	if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") || strings.HasPrefix(link, "<") {
		return "", "", false
	}
	target, frag, _ = strings.Cut(link, "#")
	if target == "" {
		return from, frag, true
	}
	return filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(from), target))), frag, true
}

// No relative link is dead: its file exists and, for a Markdown page, so
// does the heading its anchor names.
func TestNoDeadLinks(t *testing.T) {
	pages := docs(t)
	for from, p := range pages {
		for _, link := range p.links {
			target, frag, ok := resolve(from, link)
			if !ok {
				continue
			}
			if _, err := os.Stat(filepath.Join(root, target)); err != nil {
				t.Errorf("%s: link %q: %v", from, link, err)
				continue
			}
			if frag != "" && strings.HasSuffix(target, ".md") && !pages[target].anchors[frag] {
				t.Errorf("%s: link %q: %s has no heading with anchor #%s", from, link, target, frag)
			}
		}
	}
}

// The README is a landing page, every page is reachable from it through
// links, and no page is longer than a reader keeps in mind.
func TestDocsAreATree(t *testing.T) {
	pages := docs(t)
	if n := pages["README.md"].lines; n > 250 {
		t.Errorf("README.md has %d lines, want at most 250: move the detail into docs/", n)
	}
	seen := map[string]bool{"README.md": true}
	queue := []string{"README.md"}
	for len(queue) > 0 {
		from := queue[0]
		queue = queue[1:]
		for _, link := range pages[from].links {
			target, _, ok := resolve(from, link)
			if _, known := pages[target]; ok && known && !seen[target] {
				seen[target] = true
				queue = append(queue, target)
			}
		}
	}
	for path, p := range pages {
		if !seen[path] {
			t.Errorf("%s is linked from no page the README leads to", path)
		}
		if p.lines > 600 {
			t.Errorf("%s has %d lines, want at most 600: split it", path, p.lines)
		}
	}
}
