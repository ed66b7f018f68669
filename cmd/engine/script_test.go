package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/commands"
)

func TestReadScript(t *testing.T) {
	in := `# a comment
{"calls":[{"id":"c1","tool":"echo","args":{"text":"a"}}]}

{"calls":[{"id":"c2","tool":"read_file","args":{"path":"x"}},{"id":"c3","tool":"echo"}]}
`
	got, err := readScript(strings.NewReader(in), "s.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	want := []scriptLine{
		{Calls: []commands.CallRequest{{ID: "c1", Tool: "echo", Args: []byte(`{"text":"a"}`)}}},
		{Calls: []commands.CallRequest{{ID: "c2", Tool: "read_file", Args: []byte(`{"path":"x"}`)}, {ID: "c3", Tool: "echo"}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("readScript (-want +got):\n%s", diff)
	}
}

func TestReadScriptErrorsNameTheLine(t *testing.T) {
	tests := []struct {
		why, in, want string
	}{
		{"not JSON on the second line", "{\"calls\":[{\"id\":\"a\",\"tool\":\"echo\"}]}\n{nope", "s.jsonl:2:"},
		{"a step without calls", `{"calls":[]}`, "s.jsonl:1: a step needs at least one call"},
		{"an unknown key", `{"calls":[{"id":"a","tool":"echo"}],"extra":1}`, "s.jsonl:1:"},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			_, err := readScript(strings.NewReader(tt.in), "s.jsonl")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("readScript = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func FuzzReadScript(f *testing.F) {
	f.Add(`{"calls":[{"id":"c1","tool":"echo","args":{"text":"a"}}]}`)
	f.Fuzz(func(t *testing.T, in string) {
		steps, err := readScript(strings.NewReader(in), "fuzz")
		if err != nil {
			return
		}
		for _, s := range steps {
			if len(s.Calls) == 0 {
				t.Fatal("a step without calls was accepted")
			}
		}
	})
}
