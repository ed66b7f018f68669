package builtin_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/executor/builtin"
)

func TestRead(t *testing.T) {
	tool, err := builtin.Read()
	if err != nil {
		t.Fatal(err)
	}
	loc := t.TempDir()
	write := func(name, body string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(loc, name)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(loc, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var many strings.Builder
	for i := 1; i <= 2500; i++ {
		fmt.Fprintf(&many, "line %d\n", i)
	}
	write("small.txt", "one\ntwo\nthree\n")
	write("many.txt", many.String())
	write("long.txt", strings.Repeat("x", 2100)+"\n")
	write("bin.dat", "abc\x00def")
	write("dir/a.txt", "")
	write("dir/sub/b.txt", "")
	run := func(in builtin.ReadInput) (string, bool) {
		t.Helper()
		p, err := prepare(t, tool, loc, in)
		if err != nil {
			t.Fatal(err)
		}
		res := p.Run(context.Background())
		return res.Text(), res.IsError
	}
	tests := []struct {
		why     string
		in      builtin.ReadInput
		want    string
		isError bool
	}{
		{"a whole small file, numbered", builtin.ReadInput{Path: "small.txt"}, "     1\tone\n     2\ttwo\n     3\tthree\n(end of file: 3 lines)", false},
		{"offset and limit", builtin.ReadInput{Path: "small.txt", Offset: 2, Limit: 1}, "     2\ttwo\n(more lines follow: read again with offset 3; the file has 3 lines)", false},
		{"a long line is cut with a notice", builtin.ReadInput{Path: "long.txt"}, "     1\t" + strings.Repeat("x", 2000) + " … [line cut at 2000 characters]\n(end of file: 1 lines)", false},
		{"a directory is listed", builtin.ReadInput{Path: "dir"}, "a.txt\nsub/", false},
		{"a binary file is refused", builtin.ReadInput{Path: "bin.dat"}, "Cannot read binary file: bin.dat", true},
		{"an offset past the end", builtin.ReadInput{Path: "small.txt", Offset: 9}, "Offset 9 is out of range: the file has 3 lines", true},
		{"a file that is not there", builtin.ReadInput{Path: "gone.txt"}, "file not found: gone.txt", true},
	}
	for _, tt := range tests {
		got, isErr := run(tt.in)
		if diff := cmp.Diff(tt.want, got); diff != "" || isErr != tt.isError {
			t.Errorf("%s: error=%v (-want +got):\n%s", tt.why, isErr, diff)
		}
	}
	page, _ := run(builtin.ReadInput{Path: "many.txt"})
	if !strings.HasSuffix(page, "(more lines follow: read again with offset 2001; the file has 2500 lines)") || strings.Count(page, "\n") != 2000 {
		t.Errorf("a 2500-line file's first page ends %q", page[len(page)-90:])
	}
	if _, err := prepare(t, tool, loc, builtin.ReadInput{Path: "small.txt", Limit: 2001}); err == nil {
		t.Error("limit 2001 was accepted")
	}
}
