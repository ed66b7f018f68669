package config_test

import (
	"strings"
	"testing"

	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/gate"
)

// The decoder's errors, pinned: YAML the parser refuses names the line the
// parser stopped at; of several errors the first in the file is the one
// named, every time; what the configuration never accepted (a null where a
// mapping belongs, anchors and aliases, a key that is not a plain value)
// is still refused at its line.
func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		why, text, want string
	}{
		{"an unclosed flow mapping", "agents:\n  build:\n    permission: {read: allow\n", "p.yaml:3: (document): "},
		{"an unclosed string", "agents:\n  build:\n    permission:\n      read: \"x\n", "p.yaml:4: (document): "},
		{"a key written twice", "agents: {}\nagents: {}\n", "p.yaml:2: (document): "},
		{"two unknown keys", "tool_output:\n  max_files: 1\n  max_dirs: 2\nzzz: 1\n", "p.yaml:2: tool_output.max_files: unknown key"},
		{"an unknown key after a bad value", "agents:\n  b:\n    permission: {read: maybe}\n    extra: 1\n", `p.yaml:3: agents.b.permission.read: effect "maybe"`},
		{"a null agent", "agents:\n  b:\n", "p.yaml:2: agents.b: want a mapping"},
		{"a null permission", "agents:\n  b:\n    permission:\n", "p.yaml:3: agents.b.permission: want a mapping"},
		{"an alias", "x: &a {read: allow}\n", "p.yaml:1: x: unknown key"},
		{"an anchored mapping", "agents: &a\n  b: {permission: {read: allow}}\n", "agents: want a mapping"},
		{"an anchored key", "agents:\n  &k b: {}\n", "p.yaml:2: agents: a key must be a plain value"},
		{"an empty key", "\"\": 1\n", "p.yaml:1: : unknown key"},
		{"the document not a mapping", "- a\n", "p.yaml:1: (top): want a mapping"},
		{"a list rule without an action", "agents:\n  b:\n    permission:\n      - {effect: allow}\n", "p.yaml:4: agents.b.permission[0].action: an action is required"},
		{"a list rule's value not plain", "agents:\n  b:\n    permission:\n      - {action: [read]}\n", "p.yaml:4: agents.b.permission[0].action: want a plain value"},
		{"a URL not plain", "websearch:\n  endpoint: [x]\n", "p.yaml:2: websearch.endpoint: want a URL"},
		{"an unknown websearch key", "websearch:\n  url: x\n", "p.yaml:2: websearch.url: unknown key"},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			for range 20 { // the same error every time
				_, err := config.Parse("p.yaml", []byte(tt.text), gate.SourceUser)
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("Parse = %v, want an error saying %q", err, tt.want)
				}
			}
		})
	}
}

// A file of several YAML documents is one layer: each document adds to it.
func TestDecodeDocuments(t *testing.T) {
	text := "agents: {b: {permission: {read: allow}}}\ntool_output: {max_lines: 5}\n---\nagents: {b: {permission: {edit: deny}, ticket_ttl: 1m}}\ntool_output: {max_lines: 7}\nwebsearch: {endpoint: \"http://127.0.0.1:1/s\"}\n"
	f, err := config.Parse("p.yaml", []byte(text), gate.SourceProject)
	if err != nil {
		t.Fatal(err)
	}
	rs := f.Agents["b"]
	if len(rs) != 2 || rs[0].Action != "read" || rs[1].Action != "edit" || rs[1].Source != gate.SourceProject {
		t.Errorf("rules %+v, want read then edit from the project", rs)
	}
	if f.MaxLines != 7 || f.TicketTTL["b"].String() != "1m0s" || f.WebsearchEndpoint != "http://127.0.0.1:1/s" {
		t.Errorf("layer %+v, want the last document's word", f)
	}
}

// A syntax error names its line and column but quotes none of the text:
// the parser's own message renders the line, in time quadratic in its
// length (an unclosed flow sequence of 256 KiB took minutes), and would
// carry a hostile file's line into every log.
func TestSyntaxErrorsQuoteNoText(t *testing.T) {
	text := "agents: [" + strings.Repeat("payload,", (config.MaxFileBytes-16)/8)
	_, err := config.Parse("p.yaml", []byte(text), gate.SourceProject)
	if want := "p.yaml:1: (document): [1:9] sequence end token ']' not found"; err == nil || err.Error() != want {
		t.Errorf("Parse = %.200v…, want %q", err, want)
	}
}
