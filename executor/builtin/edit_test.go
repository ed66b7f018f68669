package builtin_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/builtin"
)

// editCase is one edit of f.txt: the file before ("" with missing: no
// file), the call, what the model reads and the file after.
type editCase struct {
	why, before string
	missing     bool
	in          builtin.EditInput
	want, after string
	isError     bool
}

func runEditCases(t *testing.T, tests []editCase) {
	t.Helper()
	tool, err := builtin.Edit()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			loc := t.TempDir()
			file := filepath.Join(loc, "f.txt")
			if !tt.missing {
				if err := os.WriteFile(file, []byte(tt.before), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if tt.in.Path == "" {
				tt.in.Path = "f.txt"
			}
			p, err := prepare(t, tool, loc, tt.in)
			if err != nil {
				if !tt.isError || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("refused before running: %v (want %q)", err, tt.want)
				}
			} else {
				res := p.Run(context.Background())
				if res.Text() != tt.want || res.IsError != tt.isError {
					t.Errorf("the model read %q (error %v), want %q (error %v)", res.Text(), res.IsError, tt.want, tt.isError)
				}
			}
			b, err := os.ReadFile(filepath.Join(loc, filepath.FromSlash(tt.in.Path)))
			if tt.missing && tt.after == "" {
				if err == nil {
					t.Errorf("file %q written, want none", b)
				}
				return
			}
			if string(b) != tt.after {
				t.Errorf("file %q, want %q", b, tt.after)
			}
		})
	}
}

const noMatch = "oldString not found in f.txt, exactly or by the tolerant passes (trailing whitespace, indentation, escapes, punctuation): read the file again and copy the text as it is"

func TestEdit(t *testing.T) {
	runEditCases(t, []editCase{
		{why: "one replacement", before: "a\nb\nc\n", in: builtin.EditInput{OldString: "b", NewString: "B"}, want: "Edited f.txt: 1 replacement", after: "a\nB\nc\n"},
		{why: "every occurrence", before: "x x x", in: builtin.EditInput{OldString: "x", NewString: "y", ReplaceAll: true}, want: "Edited f.txt: 3 replacements", after: "y y y"},
		{why: "BOM kept", before: "\uFEFFhello", in: builtin.EditInput{OldString: "hello", NewString: "bye"}, want: "Edited f.txt: 1 replacement", after: "\uFEFFbye"},
		{why: "no match", before: "abc", in: builtin.EditInput{OldString: "abd", NewString: "x"}, isError: true, after: "abc",
			want: noMatch},
		{why: "ambiguous", before: "ab ab", in: builtin.EditInput{OldString: "ab", NewString: "x"}, isError: true, after: "ab ab",
			want: "oldString occurs 2 times in f.txt: include more surrounding lines to make it unique, or set replaceAll"},
		{why: "identical", before: "a", in: builtin.EditInput{OldString: "a", NewString: "a"}, isError: true, after: "a", want: string(builtin.EditIdentical)},
		{why: "a missing file", missing: true, in: builtin.EditInput{OldString: "a", NewString: "b"}, isError: true, want: "cannot edit f.txt"},
	})
}

// An empty oldString creates the file or fills an empty one, as the edit
// tools of other coding agents do; on a file with content it is an error,
// as Claude Code's is (opencode's overwrites).
func TestEditEmptyOldString(t *testing.T) {
	runEditCases(t, []editCase{
		{why: "creates a missing file", missing: true, in: builtin.EditInput{NewString: "package main\n"}, want: "Created f.txt (13 bytes)", after: "package main\n"},
		{why: "creates its directories", missing: true, in: builtin.EditInput{Path: "a/b/new.go", NewString: "x"}, want: "Created a/b/new.go (1 bytes)", after: "x"},
		{why: "fills an empty file", before: "", in: builtin.EditInput{NewString: "hello\n"}, want: "Filled the empty file f.txt (6 bytes)", after: "hello\n"},
		{why: "fills an empty file, keeping its BOM", before: "\uFEFF", in: builtin.EditInput{NewString: "hello"}, want: "Filled the empty file f.txt (5 bytes)", after: "\uFEFFhello"},
		{why: "a BOM in newString is the file's own", before: "\uFEFF", in: builtin.EditInput{NewString: "\uFEFFhi"}, want: "Filled the empty file f.txt (5 bytes)", after: "\uFEFFhi"},
		{why: "a UTF-16LE BOM alone: filled in UTF-16LE", before: "\xFF\xFE", in: builtin.EditInput{NewString: "hé"}, want: "Filled the empty file f.txt (3 bytes)", after: "\xFF\xFEh\x00\xE9\x00"},
		{why: "a UTF-16BE BOM alone: filled in UTF-16BE", before: "\xFE\xFF", in: builtin.EditInput{NewString: "h\U0001F600"}, want: "Filled the empty file f.txt (5 bytes)", after: "\xFE\xFF\x00h\xD8\x3D\xDE\x00"},
		{why: "a UTF-32LE BOM alone: filled in UTF-32LE", before: "\xFF\xFE\x00\x00", in: builtin.EditInput{NewString: "h"}, want: "Filled the empty file f.txt (1 bytes)", after: "\xFF\xFE\x00\x00h\x00\x00\x00"},
		{why: "a UTF-32BE BOM alone: filled in UTF-32BE", before: "\x00\x00\xFE\xFF", in: builtin.EditInput{NewString: "h"}, want: "Filled the empty file f.txt (1 bytes)", after: "\x00\x00\xFE\xFF\x00\x00\x00h"},
		{why: "a BOM and a newline is not empty", before: "\uFEFF\n", in: builtin.EditInput{NewString: "x"}, isError: true, want: string(builtin.EditNotEmpty), after: "\uFEFF\n"},
		{why: "a UTF-16 BOM and text is not empty", before: "\xFF\xFEa\x00", in: builtin.EditInput{NewString: "x"}, isError: true, want: string(builtin.EditNotEmpty), after: "\xFF\xFEa\x00"},
		{why: "refused on a file with content", before: "keep me\n", in: builtin.EditInput{NewString: "x"}, isError: true, want: string(builtin.EditNotEmpty), after: "keep me\n"},
		{why: "a whitespace file is not empty", before: "\n", in: builtin.EditInput{NewString: "x"}, isError: true, want: string(builtin.EditNotEmpty), after: "\n"},
	})
}

// Line endings both ways: oldString matches whatever ending it is written
// in, and newString is written in the file's own.
func TestEditLineEndings(t *testing.T) {
	runEditCases(t, []editCase{
		{why: "LF oldString, CRLF file", before: "one\r\ntwo\r\nthree\r\n", in: builtin.EditInput{OldString: "one\ntwo", NewString: "1\n2"}, want: "Edited f.txt: 1 replacement", after: "1\r\n2\r\nthree\r\n"},
		{why: "CRLF oldString, LF file", before: "one\ntwo\nthree\n", in: builtin.EditInput{OldString: "one\r\ntwo\r\n", NewString: "1\r\n2\r\n"}, want: "Edited f.txt: 1 replacement", after: "1\n2\nthree\n"},
		{why: "LF newString in a CRLF file, oldString one line", before: "a\r\nb\r\n", in: builtin.EditInput{OldString: "a", NewString: "x\ny"}, want: "Edited f.txt: 1 replacement", after: "x\r\ny\r\nb\r\n"},
		{why: "CRLF newString in an LF file", before: "a\nb\n", in: builtin.EditInput{OldString: "b", NewString: "c\r\nd"}, want: "Edited f.txt: 1 replacement", after: "a\nc\nd\n"},
		{why: "mostly LF: LF wins", before: "a\nb\nc\r\n", in: builtin.EditInput{OldString: "a\r\nb", NewString: "x\r\ny"}, want: "Edited f.txt: 1 replacement", after: "x\ny\nc\r\n"},
		{why: "CRLF file, every occurrence", before: "k\r\nv\r\nk\r\nv\r\n", in: builtin.EditInput{OldString: "k\nv", NewString: "kv", ReplaceAll: true}, want: "Edited f.txt: 2 replacements", after: "kv\r\nkv\r\n"},
	})
}

// The tolerant passes, after the exact one and only when it finds nothing;
// each is used only when it finds one place, and the result names it.
func TestEditTolerantPasses(t *testing.T) {
	const (
		trailing = " (matched ignoring trailing whitespace)"
		indent   = " (matched with the indentation shifted as a block)"
		escapes  = ` (matched with the escapes \n \t \" \' \\ in oldString and newString read as the characters)`
		punct    = " (matched ignoring typographic punctuation (curly quotes, dashes, non-breaking spaces))"
	)
	one := "Edited f.txt: 1 replacement"
	runEditCases(t, []editCase{
		{why: "trailing whitespace in the file", before: "a := 1   \nb := 2\t\nc\n", in: builtin.EditInput{OldString: "a := 1\nb := 2\n", NewString: "a := 10\nb := 20\n"}, want: one + trailing, after: "a := 10\nb := 20\nc\n"},
		{why: "trailing whitespace in oldString", before: "x\ny\n", in: builtin.EditInput{OldString: "x  \ny", NewString: "X\nY"}, want: one + trailing, after: "X\nY\n"},
		{why: "trailing whitespace, CRLF file", before: "x \r\ny\r\n", in: builtin.EditInput{OldString: "x\ny\n", NewString: "z\n"}, want: one + trailing, after: "z\r\n"},
		{why: "trailing whitespace, two places: refused", before: "x \nx\t\n", in: builtin.EditInput{OldString: "x\n", NewString: "y\n"}, isError: true, after: "x \nx\t\n",
			want: "oldString is not in f.txt exactly, and occurs 2 times ignoring trailing whitespace: include more surrounding lines to make it unique"},
		{why: "indented deeper in the file", before: "func f() {\n\t\tif x {\n\t\t\treturn\n\t\t}\n}\n", in: builtin.EditInput{OldString: "if x {\n\treturn\n}", NewString: "if y {\n\treturn 1\n}"},
			want: one + indent, after: "func f() {\n\t\tif y {\n\t\t\treturn 1\n\t\t}\n}\n"},
		{why: "indented less in the file", before: "def f():\n  return 1\n", in: builtin.EditInput{OldString: "    def f():\n      return 1\n", NewString: "    def g():\n      return 2\n"},
			want: one + indent, after: "def g():\n  return 2\n"},
		{why: "indentation not shifted as a block: no match", before: "  a\n    b\n", in: builtin.EditInput{OldString: "a\nb", NewString: "x"}, isError: true, after: "  a\n    b\n",
			want: noMatch},
		{why: "escaped newlines and quotes", before: "say(\"hi\")\nend\n", in: builtin.EditInput{OldString: `say(\"hi\")\nend`, NewString: `say(\"bye\")\nend`},
			want: one + escapes, after: "say(\"bye\")\nend\n"},
		{why: "an escaped tab", before: "a\tb\n", in: builtin.EditInput{OldString: `a\tb`, NewString: `a\tc`}, want: one + escapes, after: "a\tc\n"},
		{why: "curly quotes in the file", before: "msg := \u201cit\u2019s\u201d\n", in: builtin.EditInput{OldString: `"it's"`, NewString: `"it is"`}, want: one + punct, after: "msg := \"it is\"\n"},
		{why: "an em dash and a non-breaking space in oldString", before: "a - b c\n", in: builtin.EditInput{OldString: "a \u2014 b\u00a0c", NewString: "x"}, want: one + punct, after: "x\n"},
		{why: "punctuation, two places: refused", before: "\u2018a\u2019 \u2018a\u2019", in: builtin.EditInput{OldString: "'a'", NewString: "b"}, isError: true, after: "\u2018a\u2019 \u2018a\u2019",
			want: "oldString is not in f.txt exactly, and occurs 2 times ignoring typographic punctuation (curly quotes, dashes, non-breaking spaces): include more surrounding lines to make it unique"},
		{why: "exact first: the tolerant passes are not tried", before: "x \nx\n", in: builtin.EditInput{OldString: "x\n", NewString: "y\n"}, want: one, after: "x \ny\n"},
		{why: "replaceAll does not widen a tolerant match", before: "x \nx\t\n", in: builtin.EditInput{OldString: "x\n", NewString: "y\n", ReplaceAll: true}, isError: true, after: "x \nx\t\n",
			want: "oldString is not in f.txt exactly, and occurs 2 times ignoring trailing whitespace: include more surrounding lines to make it unique"},
	})
}

// A call that waited for a human is held to the digest observed when it
// was decided; one that runs as it is decided acts on what it finds.
func TestEditObserved(t *testing.T) {
	tool, err := builtin.Edit()
	if err != nil {
		t.Fatal(err)
	}
	loc := t.TempDir()
	file := filepath.Join(loc, "f.txt")
	for _, tt := range []struct {
		why       string
		waited    bool // prepared again with what the decision recorded
		empty     bool // oldString empty, no file at the decision
		meanwhile string
		want      string
		after     string
	}{
		{"waited, the file changed meanwhile", true, false, "v = 1 // changed", string(builtin.EditChanged), "v = 1 // changed"},
		{"waited, the file unchanged", true, false, "", "Edited f.txt: 1 replacement", "v = 2"},
		{"ran as decided, the file changed meanwhile", false, false, "v = 1 // changed", "Edited f.txt: 1 replacement", "v = 2 // changed"},
		{"waited to create, the file created meanwhile", true, true, "", string(builtin.EditChanged), ""},
	} {
		os.Remove(file)
		in := builtin.EditInput{Path: "f.txt", OldString: "v = 1", NewString: "v = 2"}
		if tt.empty {
			in.OldString = ""
		} else if err := os.WriteFile(file, []byte("v = 1"), 0o600); err != nil {
			t.Fatal(err)
		}
		p, err := prepare(t, tool, loc, in)
		if err != nil {
			t.Fatal(err)
		}
		if tt.waited {
			if p.Observed() == "" {
				t.Fatalf("%s: nothing observed", tt.why)
			}
			p, err = prepareAgain(t, tool, loc, in, p)
			if err != nil {
				t.Fatal(err)
			}
		}
		if tt.meanwhile != "" || tt.empty {
			if err := os.WriteFile(file, []byte(tt.meanwhile), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if res := p.Run(context.Background()); res.Text() != tt.want {
			t.Errorf("%s: %q, want %q", tt.why, res.Text(), tt.want)
		}
		if b, _ := os.ReadFile(file); string(b) != tt.after {
			t.Errorf("%s: file %q, want %q", tt.why, b, tt.after)
		}
	}
}

// prepareAgain prepares in again as the engine does for an approved call:
// with what the first decision p observed and resolved.
func prepareAgain(t *testing.T, tool *executor.Tool, loc string, in any, p *executor.Prepared) (*executor.Prepared, error) {
	t.Helper()
	args := mustJSON(t, in)
	return tool.Prepare(executor.Call{Location: loc, Observed: p.Observed(), Paths: p.Paths()}, args)
}
