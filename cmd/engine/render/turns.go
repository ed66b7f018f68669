package render

import (
	"fmt"
	"io"

	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/events"
)

// timelineModel writes the agent settings of a run a model drives (engine
// agent): provider, model, endpoint and task.
func timelineModel(w io.Writer, r *sgclient.Run, p Palette) {
	m := r.Snapshot.Model
	if m == nil {
		return
	}
	where := ""
	if m.BaseURL != "" {
		where = " at " + m.BaseURL
	}
	var in, out int64
	for _, t := range r.Turns {
		in += t.Usage.InputTokens
		out += t.Usage.OutputTokens
	}
	fmt.Fprintf(w, "  model %s %s%s  %d turns, %d tokens in, %d out\n", m.Provider, p.paint(ansiBold, m.Model), where, len(r.Turns), in, out)
	fmt.Fprintf(w, "  task %s\n", OneLine(m.Task, 200))
}

// timelineTurn writes model turn t: its text, its stop reason and its
// token usage (its calls are the step of its number).
func timelineTurn(w io.Writer, t events.ModelTurnRecorded, p Palette) {
	fmt.Fprintf(w, "  turn %d  %s\n", t.Turn, p.paint(ansiDim, fmt.Sprintf("[%s, %d tokens in, %d out, %d calls]", t.Stop, t.Usage.InputTokens, t.Usage.OutputTokens, len(t.Calls))))
	if t.Text != "" {
		fmt.Fprintf(w, "    %s\n", OneLine(t.Text, 200))
	}
}

// turnOf is turn n of r, or nil.
func turnOf(r *sgclient.Run, n int) *events.ModelTurnRecorded {
	if n < 1 || n > len(r.Turns) {
		return nil
	}
	return &r.Turns[n-1]
}
