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

// Two edits of one file that asked, answered by separate replies: the
// second runs against what the first left (the digest it recorded), not
// against what the file held when both were decided. A change by anyone
// else, before the first ran or between the two, still refuses what comes
// after it.
func TestEditsOfOneFileApprovedBySeparateReplies(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	h := startHost(t, s, registry(t, &cnt), "h1")
	ctx := ctxT(t)
	const before = "top = 0\nmiddle\nbottom = 0\n"
	edit := func(id, old, repl string) commands.CallRequest {
		return call(id, "edit", builtin.EditInput{Path: "f.txt", OldString: old, NewString: repl})
	}
	tests := []struct {
		why     string
		calls   []commands.CallRequest
		order   []int             // the tickets, by call, in the order they are approved
		between map[int]string    // written to f.txt after the approval of order[i]
		want    map[string]string // each call's result
		after   string
	}{
		{"the second edits what the first wrote", []commands.CallRequest{edit("a", "top = 0", "top = 1"), edit("b", "top = 1", "top = 2")},
			[]int{0, 1}, nil,
			map[string]string{"a": "Edited f.txt: 1 replacement", "b": "Edited f.txt: 1 replacement"}, "top = 2\nmiddle\nbottom = 0\n"},
		{"approved in the reverse of model order", []commands.CallRequest{edit("a", "top = 0", "top = 1"), edit("b", "bottom = 0", "bottom = 2")},
			[]int{1, 0}, nil,
			map[string]string{"a": "Edited f.txt: 1 replacement", "b": "Edited f.txt: 1 replacement"}, "top = 1\nmiddle\nbottom = 2\n"},
		{"three edits, three replies", []commands.CallRequest{edit("a", "top = 0", "top = 1"), edit("b", "top = 1", "top = 2"), edit("c", "bottom = 0", "bottom = 3")},
			[]int{2, 0, 1}, nil,
			map[string]string{"a": "Edited f.txt: 1 replacement", "b": "Edited f.txt: 1 replacement", "c": "Edited f.txt: 1 replacement"}, "top = 2\nmiddle\nbottom = 3\n"},
		{"someone else changed the file between the replies", []commands.CallRequest{edit("a", "top = 0", "top = 1"), edit("b", "bottom = 0", "bottom = 2")},
			[]int{0, 1}, map[int]string{0: "top = 1\nmiddle\nbottom = 0\nextra\n"},
			map[string]string{"a": "Edited f.txt: 1 replacement", "b": string(builtin.EditChanged)}, "top = 1\nmiddle\nbottom = 0\nextra\n"},
		{"someone else undid the first edit between the replies", []commands.CallRequest{edit("a", "top = 0", "top = 1"), edit("b", "bottom = 0", "bottom = 2")},
			[]int{0, 1}, map[int]string{0: before},
			map[string]string{"a": "Edited f.txt: 1 replacement", "b": string(builtin.EditChanged)}, before},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			loc := t.TempDir()
			f := filepath.Join(loc, "f.txt")
			if err := os.WriteFile(f, []byte(before), 0o600); err != nil {
				t.Fatal(err)
			}
			info, err := h.StartRun(ctx, commands.StartRunRequest{Location: loc, Rules: []gate.Rule{{Action: "edit", Resource: "*", Effect: gate.Ask}}})
			if err != nil {
				t.Fatal(err)
			}
			out, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: tt.calls})
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Tickets) != len(tt.calls) {
				t.Fatalf("%d tickets, want %d", len(out.Tickets), len(tt.calls))
			}
			ticketOf := map[string]string{}
			for _, tk := range out.Tickets {
				ticketOf[tk.CallID] = tk.ID
			}
			var final *commands.StepOutcome
			for i, k := range tt.order {
				res, err := h.Reply(ctx, commands.ReplyRequest{Ticket: ticketOf[tt.calls[k].ID], Reply: events.ReplyOnce, Principal: "ops"})
				if err != nil {
					t.Fatal(err)
				}
				if last := i == len(tt.order)-1; last != (res.Outcome != nil) {
					t.Fatalf("after reply %d the step is final: %v", i+1, res.Outcome != nil)
				}
				final = res.Outcome
				if text, ok := tt.between[i]; ok {
					if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
						t.Fatal(err)
					}
				}
			}
			got := map[string]string{}
			for _, r := range final.Results {
				got[r.CallID] = r.Content
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("results (-want +got):\n%s", d)
			}
			if b, _ := os.ReadFile(f); string(b) != tt.after {
				t.Errorf("f.txt holds %q, want %q", b, tt.after)
			}
		})
	}
}
