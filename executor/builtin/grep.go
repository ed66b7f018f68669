package builtin

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
)

// GrepDefaultLimit is how many matches grep returns unless asked for fewer.
const GrepDefaultLimit = 100

// GrepInput is the input of grep.
type GrepInput struct {
	Pattern string `json:"pattern" jsonschema:"description=A regular expression (RE2 syntax)"`
	Path    string `json:"path,omitempty" jsonschema:"description=The directory to search (default: the workspace root)"`
	Include string `json:"include,omitempty" jsonschema:"description=Only files whose path matches this glob, e.g. **/*.go"`
	Limit   int    `json:"limit,omitempty" jsonschema:"description=At most this many matches (default 100)"`
}

// Grep builds grep: lines matching an RE2 expression in the files under a
// directory, as file:line: text, in walk order (a directory's entries by
// name, each file's lines in order); .gitignore files and .git are
// honoured, binary files skipped. Permission: grep on the
// pattern (and external_directory for a directory outside the location).
func Grep() (*executor.Tool, error) {
	return executor.New("grep",
		"Search file contents with a regular expression (RE2). Returns file:line: text, relative to the workspace, in directory walk order, at most limit (default 100). Honours .gitignore; skips binary files.",
		grepFiles, executor.WithEffect(descriptor.ReadOnly),
		executor.WithRequests(func(c executor.Call, in GrepInput) ([]descriptor.Request, error) {
			if _, err := regexp.Compile(in.Pattern); err != nil {
				return nil, fmt.Errorf("pattern: %v", err)
			}
			if in.Include != "" {
				if err := checkGlob("include", in.Include); err != nil {
					return nil, err
				}
			}
			return searchRequests(c, in.Path, "grep", in.Pattern)
		}))
}

func grepFiles(ctx context.Context, c executor.Call, in GrepInput) (string, error) {
	re, err := regexp.Compile(in.Pattern)
	if err != nil {
		return "", err
	}
	dir, err := resolveDir(c, in.Path)
	if err != nil {
		return "", err
	}
	limit := in.Limit
	if limit <= 0 {
		limit = GrepDefaultLimit
	}
	root, start, err := searchRoot(dir)
	if err != nil {
		return "No matches found", nil // gone or unreadable, as an unreadable file is skipped
	}
	defer root.Close()
	var ign ignorer
	var out []string
	more := 0
	hide := hiddenIn(c, root)
	err = fs.WalkDir(root.FS(), start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable: skip
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if hide != nil && hide(p) {
			if d.IsDir() {
				return fs.SkipDir // denied by the sandbox: neither listed nor read
			}
			return nil
		}
		rel := p
		if start != "." {
			rel = "." // the search of one file
		}
		if d.IsDir() {
			if rel != "." && (d.Name() == ".git" || ign.ignored(rel, true)) {
				return fs.SkipDir
			}
			if rel == "." {
				rel = ""
			}
			ign.load(root, rel)
			return nil
		}
		if !d.Type().IsRegular() || ign.ignored(rel, false) {
			return nil
		}
		if in.Include != "" {
			if ok, _ := doublestar.Match(in.Include, rel); !ok {
				return nil
			}
		}
		return grepFile(root, p, shownPath(dir, rel), re, limit, &out, &more)
	})
	if err != nil {
		return "", err
	}
	if len(out) == 0 {
		return "No matches found", nil
	}
	if more > 0 {
		out = append(out, fmt.Sprintf("(%d more matches not shown: narrow the pattern or raise limit)", more))
	}
	return strings.Join(out, "\n"), nil
}

// grepFile appends the lines of root's file name that match re to out, as
// shown:line: text; past limit it counts them in more.
func grepFile(root *os.Root, name, shown string, re *regexp.Regexp, limit int, out *[]string, more *int) error {
	f, err := openRegular(root, name)
	if err != nil {
		return nil
	}
	defer f.Close()
	r := bufio.NewReader(f)
	if head, _ := r.Peek(readSniffLength); bytes.IndexByte(head, 0) >= 0 {
		return nil // binary
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if !re.MatchString(line) {
			continue
		}
		if len(*out) >= limit {
			*more++
			continue
		}
		if len(line) > ReadMaxLineLen {
			line = strings.ToValidUTF8(line[:ReadMaxLineLen], "") + " …"
		}
		*out = append(*out, fmt.Sprintf("%s:%d: %s", shown, n, line))
	}
	return nil
}
