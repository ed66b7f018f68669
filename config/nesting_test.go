package config

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
)

// endless is /dev/zero as a reader: it never ends, and counts what was
// read from it.
type endless struct{ read int64 }

func (e *endless) Read(p []byte) (int, error) {
	clear(p)
	e.read += int64(len(p))
	return len(p), nil
}

// A file that keeps growing after its fstat (or that reports no size) is
// read up to one byte past the cap and no further, then refused: the
// reader bounds what is read, whatever the size said.
func TestReadCappedReadsOneByteTooMany(t *testing.T) {
	src := &endless{}
	data, err := readCapped(src, "grows.yaml")
	want := "grows.yaml:0: (file): more than the 262144 bytes a configuration file may hold"
	if data != nil || err == nil || err.Error() != want || !errors.Is(err, ErrInvalid) {
		t.Fatalf("readCapped = %d bytes, %v; want nothing and %q", len(data), err, want)
	}
	if src.read != MaxFileBytes+1 {
		t.Errorf("read %d bytes of an endless file, want MaxFileBytes+1 = %d", src.read, MaxFileBytes+1)
	}
}

// How deep text nests, as nesting counts it, for the shapes YAML has.
func TestNesting(t *testing.T) {
	tests := []struct {
		why, text string
		want      int
	}{
		{"a scalar", "x\n", 0},
		{"a mapping", "a: 1\nb: 2\n", 1},
		{"a nested mapping", "a:\n  b:\n    c: 1\nd: 2\n", 3},
		{"a sequence under a key, at the key's column", "a:\n- x\n- y\nb: 1\n", 2},
		{"a sequence under a key, indented", "a:\n  - x\n  - y\n", 2},
		{"a sequence of mappings", "- a: 1\n  b: 2\n- c: 3\n", 2},
		{"sequences on one line", "- - - x\n", 3},
		{"flow in block", "a: {b: [c, [d]]}\n", 4},
		{"flow closed, then siblings", "a: [[x]]\nb: [y]\n", 3},
		{"a pair in a flow sequence", "[a: 1, b, c: [d]]\n", 3},
		{"JSON", `{"agents": {"build": {"permission": {"read": "allow"}}}}`, 4},
		{"documents start again", "a:\n  b: 1\n---\nc: 1\n", 2},
		{"explicit keys (the key counted twice)", "? a\n: 1\n", 2},
		{"a rule list", "agents:\n  b:\n    permission:\n      - {action: read, effect: allow}\n", 5},
	}
	for _, tt := range tests {
		if got, _ := nesting(lexer.Tokenize(tt.text), math.MaxInt); got != tt.want {
			t.Errorf("%s: nesting of %q = %d, want %d", tt.why, tt.text, got, tt.want)
		}
	}
}

// MaxNesting levels parse; one more, in flow or block form, is refused
// before the parser sees it, at the line where it went too deep.
func TestParseRefusesDeepNesting(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	if _, err := parseYAML("ok.yaml", []byte("x: "+deep(MaxNesting-1))); err != nil {
		t.Errorf("%d levels: %v", MaxNesting, err)
	}
	for _, text := range []string{
		"x: " + deep(MaxNesting),
		"a: 1\n" + strings.Repeat("- ", MaxNesting+1) + "x\n",
		strings.Repeat("[", 1<<14), // the parser took 17 s and 560 MB over this
	} {
		_, err := parseYAML("deep.yaml", []byte(text))
		var ce *Error
		if !errors.As(err, &ce) || ce.Msg != "nested deeper than 64 levels" || ce.Line != strings.Count(text[:strings.IndexAny(text, "[-")], "\n")+1 {
			t.Errorf("%.20q…: %v, want refused as nested too deep at its line", text, err)
		}
	}
}

// depth is how deep a parsed tree's collections nest.
func depth(n ast.Node) int {
	switch n := n.(type) {
	case *ast.DocumentNode:
		return depth(n.Body)
	case *ast.MappingNode:
		d := 0
		for _, v := range n.Values {
			d = max(d, depth(v.Key), depth(v.Value))
		}
		return 1 + d
	case *ast.MappingValueNode:
		return 1 + max(depth(n.Key), depth(n.Value))
	case *ast.SequenceNode:
		d := 0
		for _, v := range n.Values {
			d = max(d, depth(v))
		}
		return 1 + d
	case *ast.TagNode:
		return depth(n.Value)
	case *ast.AnchorNode:
		return depth(n.Value)
	case *ast.MappingKeyNode:
		return depth(n.Value)
	}
	return 0
}

// nesting never counts less than half what the parser nests: whatever
// text the parser accepts, its tree is at most twice as deep as nesting
// said (the parser reads a few shapes YAML refuses as nested, such as a
// key at the column of an empty "-" above it), so the check before the
// parser cannot be slipped past: it never sees more than 2×MaxNesting
// levels.
func FuzzNesting(f *testing.F) {
	for _, s := range []string{
		"a:\n  b:\n    c: 1\n", "a:\n- x\n- y\n", "- - - x\n", "a: {b: [c, [d]]}\n", "? a\n: 1\n",
		"a: !!map {b: 1}\n", "a: &x [1]\n", "- a: 1\n  b: [x]\n", "a:\n  - b:\n    - c: 1\n", "[a, {b: c}]\n",
		"a:\n  b: 1\n---\nc:\n  d: 1\n", "? [a, b]\n: c\n", "a: |\n  [[[\n", "'a': {\"b\": [1]}\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 4096 {
			return
		}
		toks := lexer.Tokenize(text)
		counted, _ := nesting(toks, math.MaxInt)
		tree, err := parser.Parse(toks, 0)
		if err != nil {
			return
		}
		d := 0
		for _, doc := range tree.Docs {
			d = max(d, depth(doc))
		}
		if d > 2*counted {
			t.Fatalf("%q nests %d deep, nesting counted %d", text, d, counted)
		}
	})
}
