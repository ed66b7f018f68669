package commands_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor/builtin"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/step/steptest"
)

// Calls of one step on one file apply in model order, each against the file
// as the previous one left it: the digest a call observed when it was
// decided holds only calls that waited for a human, and not against what an
// earlier call of its own step changed.
func TestCallsOfOneStepOnOneFile(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	h := startHost(t, s, registry(t, &cnt), "h1")
	ctx := ctxT(t)
	const before = "top = 0\nmiddle\nbottom = 0\n"
	edit := func(id, path, old, repl string) commands.CallRequest {
		return call(id, "edit", builtin.EditInput{Path: path, OldString: old, NewString: repl})
	}
	tests := []struct {
		why       string
		effect    gate.Effect // of edit on *
		meanwhile string      // written to f.txt before the approval ("": left alone)
		calls     []commands.CallRequest
		want      []string // each call's result, in model order
		after     map[string]string
	}{
		{"two allowed edits of one file", gate.Allow, "",
			[]commands.CallRequest{edit("a", "f.txt", "top = 0", "top = 1"), edit("b", "f.txt", "bottom = 0", "bottom = 2")},
			[]string{"Edited f.txt: 1 replacement", "Edited f.txt: 1 replacement"},
			map[string]string{"f.txt": "top = 1\nmiddle\nbottom = 2\n"}},
		{"the second edits what the first wrote: model order", gate.Allow, "",
			[]commands.CallRequest{edit("a", "f.txt", "top = 0", "top = 1"), edit("b", "f.txt", "top = 1", "top = 2"), edit("c", "f.txt", "top = 2", "top = 3")},
			[]string{"Edited f.txt: 1 replacement", "Edited f.txt: 1 replacement", "Edited f.txt: 1 replacement"},
			map[string]string{"f.txt": "top = 3\nmiddle\nbottom = 0\n"}},
		{"a write, then an edit of what it wrote", gate.Allow, "",
			[]commands.CallRequest{call("w", "write", builtin.WriteInput{Path: "f.txt", Content: "x = 0\n"}), edit("e", "f.txt", "x = 0", "x = 1")},
			[]string{"Overwrote f.txt (6 bytes)", "Edited f.txt: 1 replacement"},
			map[string]string{"f.txt": "x = 1\n"}},
		{"a failed edit leaves the next one against the file as it was", gate.Allow, "",
			[]commands.CallRequest{edit("a", "f.txt", "nowhere", "x"), edit("b", "f.txt", "top = 0", "top = 1")},
			[]string{"oldString not found in f.txt, exactly or by the tolerant passes (trailing whitespace, indentation, escapes, punctuation): read the file again and copy the text as it is", "Edited f.txt: 1 replacement"},
			map[string]string{"f.txt": "top = 1\nmiddle\nbottom = 0\n"}},
		{"edits of two files, interleaved", gate.Allow, "",
			[]commands.CallRequest{edit("a", "f.txt", "top = 0", "top = 1"), edit("b", "g.txt", "top = 0", "top = 5"), edit("c", "f.txt", "top = 1", "top = 2"), edit("d", "g.txt", "top = 5", "top = 6")},
			[]string{"Edited f.txt: 1 replacement", "Edited g.txt: 1 replacement", "Edited f.txt: 1 replacement", "Edited g.txt: 1 replacement"},
			map[string]string{"f.txt": "top = 2\nmiddle\nbottom = 0\n", "g.txt": "top = 6\nmiddle\nbottom = 0\n"}},
		{"two edits that asked, approved together", gate.Ask, "",
			[]commands.CallRequest{edit("a", "f.txt", "top = 0", "top = 1"), edit("b", "f.txt", "top = 1", "top = 2")},
			[]string{"Edited f.txt: 1 replacement", "Edited f.txt: 1 replacement"},
			map[string]string{"f.txt": "top = 2\nmiddle\nbottom = 0\n"}},
		{"two edits that asked, the file changed before the approval: both refused", gate.Ask, "top = 0\nchanged\n",
			[]commands.CallRequest{edit("a", "f.txt", "top = 0", "top = 1"), edit("b", "f.txt", "top = 1", "top = 2")},
			[]string{string(builtin.EditChanged), string(builtin.EditChanged)},
			map[string]string{"f.txt": "top = 0\nchanged\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			loc := t.TempDir()
			for _, name := range []string{"f.txt", "g.txt"} {
				if err := os.WriteFile(filepath.Join(loc, name), []byte(before), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			var rules []gate.Rule // the host's rules allow edit
			if tt.effect == gate.Ask {
				rules = []gate.Rule{{Action: "edit", Resource: "*", Effect: gate.Ask}}
			}
			info, err := h.StartRun(ctx, commands.StartRunRequest{Location: loc, Rules: rules})
			if err != nil {
				t.Fatal(err)
			}
			out, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: tt.calls})
			if err != nil {
				t.Fatal(err)
			}
			if tt.effect == gate.Ask {
				if len(out.Tickets) != len(tt.calls) {
					t.Fatalf("%d tickets, want %d", len(out.Tickets), len(tt.calls))
				}
				if tt.meanwhile != "" {
					if err := os.WriteFile(filepath.Join(loc, "f.txt"), []byte(tt.meanwhile), 0o600); err != nil {
						t.Fatal(err)
					}
				}
				// The last ticket approved always: the others with it; the calls
				// still run in model order.
				res, err := h.Reply(ctx, commands.ReplyRequest{Ticket: out.Tickets[len(out.Tickets)-1].ID, Reply: events.ReplyAlways, Principal: "ops"})
				if err != nil {
					t.Fatal(err)
				}
				if res.Outcome == nil {
					t.Fatal("the step is not final after the approval")
				}
				out = res.Outcome
			}
			var got []string
			for _, r := range out.Results {
				got = append(got, r.Content)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("results (-want +got):\n%s", d)
			}
			for name, want := range tt.after {
				if b, _ := os.ReadFile(filepath.Join(loc, name)); string(b) != want {
					t.Errorf("%s holds %q, want %q", name, b, want)
				}
			}
		})
	}
}
