package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/stepgate/stepgate/agent"
	"github.com/stepgate/stepgate/agent/model"
	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/cmd/engine/render"
)

// agentPrinter writes what engine agent does: the model's text as it
// arrives, each turn's calls and token usage, each step's results, the
// tickets with the commands that answer them, and the end; or, with
// --json, one JSON object a line: {"event":"text"|"turn"|"step"|"ticket"|"end", …}.
type agentPrinter struct {
	w    io.Writer
	json bool
	conn string // the connection flags of suggested commands (connFlags.hint)
	// midLine is set while model text has been written without a newline.
	midLine bool
}

var _ agent.Output = (*agentPrinter)(nil)

func newAgentPrinter(w io.Writer, asJSON bool, conn string) *agentPrinter {
	return &agentPrinter{w: w, json: asJSON, conn: conn}
}

func (p *agentPrinter) emit(v map[string]any) {
	b, _ := json.Marshal(v)
	fmt.Fprintf(p.w, "%s\n", b)
}

// endLine ends a line of model text before anything else is printed.
func (p *agentPrinter) endLine() {
	if p.midLine {
		fmt.Fprintln(p.w)
		p.midLine = false
	}
}

// Started implements agent.Output.
func (p *agentPrinter) Started(run string, resumed bool, st agent.State) {
	if p.json {
		p.emit(map[string]any{"event": "started", "run": run, "resumed": resumed, "turns": st.Turns, "steps": st.Steps})
		return
	}
	if resumed {
		fmt.Fprintf(p.w, "run %s resumed after %d turns and %d steps\n", run, st.Turns, st.Steps)
		return
	}
	fmt.Fprintf(p.w, "run %s started\n", run)
}

// Text implements agent.Output.
func (p *agentPrinter) Text(delta string) {
	if delta == "" {
		return
	}
	if p.json {
		p.emit(map[string]any{"event": "text", "text": delta})
		return
	}
	fmt.Fprint(p.w, delta)
	p.midLine = !strings.HasSuffix(delta, "\n")
}

// Turn implements agent.Output.
func (p *agentPrinter) Turn(run string, n int, t model.Turn) {
	if p.json {
		p.emit(map[string]any{"event": "turn", "run": run, "turn": n, "response_id": t.ID, "calls": t.Calls, "stop": t.Stop, "usage": t.Usage})
		return
	}
	p.endLine()
	for _, c := range t.Calls {
		fmt.Fprintf(p.w, "  → %s %s %s\n", c.ID, c.Name, render.OneLine(string(c.Args), 100))
	}
	fmt.Fprintf(p.w, "  [turn %d: %d tokens in, %d out]\n", n, t.Usage.InputTokens, t.Usage.OutputTokens)
}

// Step implements agent.Output.
func (p *agentPrinter) Step(out *sgclient.StepOutcome) {
	if p.json {
		p.emit(map[string]any{"event": "step", "run": out.Run, "step": out.Step, "results": out.Results})
		return
	}
	p.endLine()
	fmt.Fprintf(p.w, "step %d\n", out.Step)
	for _, r := range out.Results {
		fmt.Fprintf(p.w, "  %-10s %-10s %-7s %s\n", r.CallID, r.Tool, r.Verdict, render.OneLine(r.Content, 100))
	}
}

// Waiting implements agent.Output.
func (p *agentPrinter) Waiting(run string, step int, ts []agent.Ticket) {
	if p.json {
		for _, t := range ts {
			p.emit(map[string]any{"event": "ticket", "run": run, "step": step, "ticket": t.ID, "call_id": t.CallID, "tool": t.Tool, "reason": t.Reason})
		}
		return
	}
	p.endLine()
	fmt.Fprintf(p.w, "step %d awaits a human:\n", step)
	for _, t := range ts {
		fmt.Fprintf(p.w, "  ticket %s  %s %s  %s\n    engine approve %s%s   /   engine reject %s%s -m FEEDBACK\n",
			t.ID, t.Tool, t.CallID, t.Reason, t.ID, p.conn, t.ID, p.conn)
	}
	fmt.Fprintf(p.w, "  (the run goes on once answered; stopped, it goes on with: engine agent --resume %s%s)\n", run, p.conn)
}

// Ended implements agent.Output.
func (p *agentPrinter) Ended(res *agent.Result) {
	if p.json {
		p.emit(map[string]any{"event": "end", "run": res.Run, "cause": res.Cause, "reason": res.Reason, "text": res.Text,
			"turns": res.Turns, "steps": res.Steps, "usage": res.Usage})
		return
	}
	p.endLine()
	fmt.Fprintf(p.w, "run %s ended: %s after %d steps (%d tokens in, %d out)\n", res.Run, res.Cause, res.Steps, res.Usage.InputTokens, res.Usage.OutputTokens)
	if res.Reason != "" {
		fmt.Fprintf(p.w, "  %s\n", res.Reason)
	}
}
