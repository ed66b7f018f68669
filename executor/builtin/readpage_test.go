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

// read and read_file judge a file by its content, not its name: a text
// file named like an image (.bmp, .tiff, .avif, .png) or an archive is
// read; real binaries are refused whatever their name. A file named like a
// binary format is looked at whole, so binary bytes after the first 8 KiB
// refuse it too (a file of another name is judged by its first 8 KiB).
func TestReadJudgesBinaryByContent(t *testing.T) {
	read, err := builtin.Read()
	if err != nil {
		t.Fatal(err)
	}
	readFile, err := builtin.ReadFile()
	if err != nil {
		t.Fatal(err)
	}
	loc := t.TempDir()
	text := "looks like text\n"
	late := strings.Repeat("text line\n", 1000) + "\x00\x01\x02\n" // text for 10,000 bytes, then binary
	files := map[string]string{
		"icon.bmp": text, "scan.tiff": text, "photo.avif": text, "logo.PNG": text, "a.zip": text, "doc.pdf": text,
		// real binaries: their first bytes as the formats begin
		"real.bmp":  "BM\x36\x00\x0c\x00\x00\x00\x00\x00\x36\x00\x00\x00",
		"real.tiff": "II*\x00\x08\x00\x00\x00",
		"real.avif": "\x00\x00\x00\x1cftypavif\x00\x00\x00\x00avifmif1",
		"real.png":  "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
		"real.gz":   "\x1f\x8b\x08\x00\x00\x00\x00\x00",
		"noext.bin": "\xff\xfe\xfd",
		"late.pdf":  late,
		"late.txt":  late,
	}
	writeTree(t, loc, files)
	for _, tc := range []struct {
		name     string
		read     string // read's text
		readFile string // read_file's text
	}{
		{"icon.bmp", "     1\tlooks like text\n(end of file: 1 lines)", text},
		{"scan.tiff", "     1\tlooks like text\n(end of file: 1 lines)", text},
		{"photo.avif", "     1\tlooks like text\n(end of file: 1 lines)", text},
		{"logo.PNG", "     1\tlooks like text\n(end of file: 1 lines)", text},
		{"a.zip", "     1\tlooks like text\n(end of file: 1 lines)", text},
		{"doc.pdf", "     1\tlooks like text\n(end of file: 1 lines)", text},
		{"real.bmp", "Cannot read binary file: real.bmp", "Cannot read binary file: real.bmp"},
		{"real.tiff", "Cannot read binary file: real.tiff", "Cannot read binary file: real.tiff"},
		{"real.avif", "Cannot read binary file: real.avif", "Cannot read binary file: real.avif"},
		{"real.png", "Cannot read binary file: real.png", "Cannot read binary file: real.png"},
		{"real.gz", "Cannot read binary file: real.gz", "Cannot read binary file: real.gz"},
		{"noext.bin", "Cannot read binary file: noext.bin", "Cannot read binary file: noext.bin"},
		{"late.pdf", "Cannot read binary file: late.pdf", "Cannot read binary file: late.pdf"},
		{"late.txt", "     1\ttext line\n     2\ttext line\n", "Cannot read binary file: late.txt"}, // read: its first 8 KiB, a prefix
	} {
		got := runText(t, read, loc, builtin.ReadInput{Path: tc.name})
		if tc.name == "late.txt" && strings.HasPrefix(got, tc.read) {
			got = tc.read
		}
		if got != tc.read {
			t.Errorf("read %s: %q, want %q", tc.name, got, tc.read)
		}
		if got := runText(t, readFile, loc, builtin.ReadFileInput{Path: tc.name}); got != tc.readFile {
			t.Errorf("read_file %s: %q, want %q", tc.name, got, tc.readFile)
		}
	}
}
