package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/executor/builtin"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/projection"
)

// printer writes what a scripted run does, for people or as JSON lines.
type printer struct {
	w    io.Writer
	json bool
}

func newPrinter(w io.Writer, asJSON bool) *printer { return &printer{w: w, json: asJSON} }

func (p *printer) emit(v any) {
	b, _ := json.Marshal(v)
	fmt.Fprintf(p.w, "%s\n", b)
}

func (p *printer) started(info *commands.RunInfo) {
	if p.json {
		p.emit(map[string]any{"run": info.Run, "event": "started", "tools": len(info.Catalog.Tools)})
		return
	}
	names := make([]string, len(info.Catalog.Tools))
	for i, t := range info.Catalog.Tools {
		names[i] = t.Name
	}
	fmt.Fprintf(p.w, "run %s started; tools: %s\n", info.Run, strings.Join(names, ", "))
}

func (p *printer) step(out *commands.StepOutcome) {
	if p.json {
		p.emit(out)
		return
	}
	if !out.Final {
		fmt.Fprintf(p.w, "step %d awaits a human:\n", out.Step)
		for _, t := range out.Tickets {
			fmt.Fprintf(p.w, "  ticket %s  %s %s  (engine approve %s / engine reject %s)\n", t.ID, t.Tool, t.CallID, t.ID, t.ID)
		}
		return
	}
	fmt.Fprintf(p.w, "step %d\n", out.Step)
	for _, r := range out.Results {
		fmt.Fprintf(p.w, "  %-4s %-10s %-7s %s\n", r.CallID, r.Tool, r.Verdict, oneLine(r.Content, 100))
	}
}

func (p *printer) note(run, text string) {
	if p.json {
		p.emit(map[string]any{"run": run, "event": "note", "text": text})
		return
	}
	fmt.Fprintln(p.w, text)
}

func (p *printer) ended(s *sgclient.RunSummary) {
	if p.json {
		p.emit(map[string]any{"run": s.ID, "event": "ended", "cause": s.Cause, "steps": s.Steps})
		return
	}
	fmt.Fprintf(p.w, "run %s ended: %s after %d steps\n", s.ID, s.Cause, s.Steps)
}

// oneLine shortens s to one line of at most n runes for a terminal.
func oneLine(s string, n int) string {
	s = strings.ReplaceAll(strings.TrimSpace(s), "\n", " ⏎ ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// timeline prints a run as a person reads it: every step, every call with
// its verdict, the rule that decided and its result.
func timeline(w io.Writer, r *sgclient.Run) {
	status := string(r.Status)
	if r.End != nil {
		status += " (" + r.End.Cause + ")"
	}
	fmt.Fprintf(w, "run %s  agent %s  %s\n", r.ID, r.Snapshot.Agent, status)
	fmt.Fprintf(w, "  location %s  project %s  engine %s  policy %.12s\n", r.Snapshot.Location, r.Snapshot.Project, r.Snapshot.EngineVersion, r.Snapshot.PolicyDigest)
	if r.Diverged != nil {
		fmt.Fprintf(w, "  DIVERGED: its history lost a write; it takes no more steps: %s\n", (*projection.Divergence)(r.Diverged))
	}
	for _, s := range r.Steps {
		final := "final"
		if !s.Final {
			final = "open"
		}
		fmt.Fprintf(w, "  step %d (%s)\n", s.N, final)
		for _, c := range s.Calls {
			fmt.Fprintf(w, "    %s %s %s\n", c.ID, c.Tool, oneLine(string(c.Args), 80))
			if d := c.Decision; d != nil {
				rule := ""
				if d.Rule != nil {
					rule = fmt.Sprintf(" · rule %s %q %s (%s)", d.Rule.Action, d.Rule.Resource, d.Rule.Effect, gate.Source(d.Rule.Source).Label())
				}
				fmt.Fprintf(w, "      verdict %s%s\n", d.Verdict, rule)
			}
			if c.Ticket != "" {
				if t := r.Ticket(c.Ticket); t != nil {
					fmt.Fprintf(w, "      ticket %s (%s)%s\n", t.ID, t.Kind, resolution(t))
				}
			}
			if c.Attempts > 0 {
				fmt.Fprintf(w, "      started (attempt %d)\n", c.Attempts)
			}
			if res := c.Result; res != nil {
				var text []string
				for _, part := range res.Parts {
					if part.Type == "text" {
						text = append(text, part.Text)
					}
				}
				mark := "→"
				if res.IsError {
					mark = "✗"
				}
				fmt.Fprintf(w, "      %s %s\n", mark, oneLine(strings.Join(text, "\n"), 100))
			}
		}
	}
	todos(w, r)
}

// todos prints the run's current todo list, when it has one.
func todos(w io.Writer, r *sgclient.Run) {
	raw, ok := r.State[builtin.TodoStateKey]
	if !ok {
		return
	}
	var l builtin.TodoList
	if err := json.Unmarshal(raw, &l); err != nil {
		fmt.Fprintf(w, "  todos: unreadable (%v)\n", err)
		return
	}
	fmt.Fprintf(w, "  todos (%d)\n", len(l))
	for line := range strings.Lines(l.Checklist()) {
		fmt.Fprintf(w, "    %s", line)
	}
}

// resolution describes how a ticket was answered, for a timeline.
func resolution(t *sgclient.Ticket) string {
	res := t.Resolution
	if res == nil {
		return ": pending"
	}
	s := ": " + res.Reply
	if res.Principal != "" {
		s += " by " + res.Principal
	}
	if res.By != "" {
		s += " (with ticket " + res.By + ")"
	}
	if res.Message != "" {
		s += ": " + oneLine(res.Message, 60)
	}
	return s
}
