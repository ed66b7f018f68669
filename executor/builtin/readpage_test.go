package builtin_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/executor/builtin"
)

// read of a directory pages its entries with offset and limit, as it pages
// a file's lines.
func TestReadDirectoryPages(t *testing.T) {
	tool, err := builtin.Read()
	if err != nil {
		t.Fatal(err)
	}
	loc := t.TempDir()
	files := map[string]string{"d/sub/x.txt": ""}
	for i := 1; i <= 5; i++ {
		files[fmt.Sprintf("d/f%d.txt", i)] = ""
	}
	files["big/keep.txt"] = ""
	for i := range 2100 {
		files[fmt.Sprintf("big/e%04d", i)] = ""
	}
	writeTree(t, loc, files)
	tests := []struct {
		why     string
		in      builtin.ReadInput
		want    string
		isError bool
	}{
		{"whole, as before", builtin.ReadInput{Path: "d"}, "f1.txt\nf2.txt\nf3.txt\nf4.txt\nf5.txt\nsub/", false},
		{"a limit", builtin.ReadInput{Path: "d", Limit: 2}, "f1.txt\nf2.txt\n(more entries follow: read again with offset 3; the directory has 6 entries)", false},
		{"an offset and a limit", builtin.ReadInput{Path: "d", Offset: 3, Limit: 2}, "f3.txt\nf4.txt\n(more entries follow: read again with offset 5; the directory has 6 entries)", false},
		{"an offset to the end", builtin.ReadInput{Path: "d", Offset: 5}, "f5.txt\nsub/\n(end of directory: 6 entries)", false},
		{"an offset past the end", builtin.ReadInput{Path: "d", Offset: 7}, "Offset 7 is out of range: the directory has 6 entries", true},
	}
	for _, tt := range tests {
		p, err := prepare(t, tool, loc, tt.in)
		if err != nil {
			t.Fatal(err)
		}
		res := p.Run(context.Background())
		if d := cmp.Diff(tt.want, res.Text()); d != "" || res.IsError != tt.isError {
			t.Errorf("%s: error %v (-want +got):\n%s", tt.why, res.IsError, d)
		}
	}
	page := runText(t, tool, loc, builtin.ReadInput{Path: "big"})
	if n := strings.Count(page, "\n"); n != 2000 || !strings.HasSuffix(page, "(more entries follow: read again with offset 2001; the directory has 2101 entries)") {
		t.Errorf("a 2101-entry directory's first page: %d lines, ending %q", n, page[len(page)-80:])
	}
}

// Binary files are refused by well-known extension, whatever they hold,
// as well as by content; read returns no media, so images are refused too.
func TestReadRefusesBinaryByName(t *testing.T) {
	read, err := builtin.Read()
	if err != nil {
		t.Fatal(err)
	}
	readFile, err := builtin.ReadFile()
	if err != nil {
		t.Fatal(err)
	}
	loc := t.TempDir()
	names := []string{"m.wasm", "a.zip", "b.tar", "c.tar.gz", "x.o", "lib.so", "Main.class", "m.pyc", "logo.PNG", "p.jpg", "doc.pdf", "f.woff2"}
	files := map[string]string{"text.md": "hello\n", "noext": "plain\n", "nul.txt": "a\x00b"}
	for _, n := range names {
		files[n] = "looks like text\n" // refused by name alone
	}
	writeTree(t, loc, files)
	for _, tc := range []struct {
		name string
		want string
	}{
		{"text.md", "     1\thello\n(end of file: 1 lines)"},
		{"noext", "     1\tplain\n(end of file: 1 lines)"},
		{"nul.txt", "Cannot read binary file: nul.txt"},
	} {
		if got := runText(t, read, loc, builtin.ReadInput{Path: tc.name}); got != tc.want {
			t.Errorf("read %s: %q, want %q", tc.name, got, tc.want)
		}
	}
	for _, n := range names {
		want := "Cannot read binary file: " + n
		if got := runText(t, read, loc, builtin.ReadInput{Path: n}); got != want {
			t.Errorf("read %s: %q, want %q", n, got, want)
		}
		if got := runText(t, readFile, loc, builtin.ReadFileInput{Path: n}); got != want {
			t.Errorf("read_file %s: %q, want %q", n, got, want)
		}
	}
}
