package builtin_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepgate/stepgate/executor/builtin"
)

func TestEdit(t *testing.T) {
	tool, err := builtin.Edit()
	if err != nil {
		t.Fatal(err)
	}
	loc := t.TempDir()
	tests := []struct {
		why, before string
		in          builtin.EditInput
		want, after string
		isError     bool
	}{
		{"one replacement", "a\nb\nc\n", builtin.EditInput{OldString: "b", NewString: "B"}, "Edited f.txt: 1 replacement", "a\nB\nc\n", false},
		{"every occurrence", "x x x", builtin.EditInput{OldString: "x", NewString: "y", ReplaceAll: true}, "Edited f.txt: 3 replacements", "y y y", false},
		{"CRLF kept", "one\r\ntwo\r\nthree\r\n", builtin.EditInput{OldString: "one\ntwo", NewString: "1\n2"}, "Edited f.txt: 1 replacement", "1\r\n2\r\nthree\r\n", false},
		{"BOM kept", "\uFEFFhello", builtin.EditInput{OldString: "hello", NewString: "bye"}, "Edited f.txt: 1 replacement", "\uFEFFbye", false},
		{"no match", "abc", builtin.EditInput{OldString: "  abc", NewString: "x"},
			"oldString not found in f.txt: it must match the file exactly, including whitespace and indentation; read the file again", "abc", true},
		{"ambiguous", "ab ab", builtin.EditInput{OldString: "ab", NewString: "x"},
			"oldString occurs 2 times in f.txt: include more surrounding lines to make it unique, or set replaceAll", "ab ab", true},
	}
	file := filepath.Join(loc, "f.txt")
	for _, tt := range tests {
		if err := os.WriteFile(file, []byte(tt.before), 0o600); err != nil {
			t.Fatal(err)
		}
		tt.in.Path = "f.txt"
		p, err := prepare(t, tool, loc, tt.in)
		if err != nil {
			t.Fatalf("%s: %v", tt.why, err)
		}
		res := p.Run(context.Background())
		if res.Text() != tt.want || res.IsError != tt.isError {
			t.Errorf("%s: %q (error %v), want %q (error %v)", tt.why, res.Text(), res.IsError, tt.want, tt.isError)
		}
		if b, _ := os.ReadFile(file); string(b) != tt.after {
			t.Errorf("%s: file %q, want %q", tt.why, b, tt.after)
		}
	}

	// Refused before anything is asked.
	for _, in := range []struct {
		in   builtin.EditInput
		want string
	}{
		{builtin.EditInput{Path: "f.txt", OldString: "a", NewString: "a"}, string(builtin.EditIdentical)},
		{builtin.EditInput{Path: "f.txt", OldString: "", NewString: "a"}, string(builtin.EditEmptyOld)},
		{builtin.EditInput{Path: "missing.txt", OldString: "a", NewString: "b"}, "cannot edit missing.txt"},
	} {
		if _, err := prepare(t, tool, loc, in.in); err == nil || !strings.Contains(err.Error(), in.want) {
			t.Errorf("%+v: %v, want %q", in.in, err, in.want)
		}
	}

	// Decided, then the file changed: the edit is refused and the change kept.
	if err := os.WriteFile(file, []byte("v = 1"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := prepare(t, tool, loc, builtin.EditInput{Path: "f.txt", OldString: "v = 1", NewString: "v = 2"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("v = 1 // changed"), 0o600); err != nil {
		t.Fatal(err)
	}
	if res := p.Run(context.Background()); res.Text() != string(builtin.EditChanged) || !res.IsError {
		t.Errorf("after a change: %q, want %q", res.Text(), builtin.EditChanged)
	}
	if b, _ := os.ReadFile(file); string(b) != "v = 1 // changed" {
		t.Errorf("file %q, want the change kept", b)
	}
}
