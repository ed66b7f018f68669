package render

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/commands"
)

// Printer writes what a scripted run does (engine run --script, the demo,
// the answers to tickets), for people or as JSON lines.
type Printer struct {
	w    io.Writer
	json bool
	// Conn is the connection flags the commands it suggests carry (such as
	// " --data DIR"), so a suggested command reaches the same engine.
	Conn string
}

// NewPrinter is a printer to w: JSON lines when asJSON, else text.
func NewPrinter(w io.Writer, asJSON bool) *Printer { return &Printer{w: w, json: asJSON} }

func (p *Printer) emit(v any) {
	b, _ := json.Marshal(v)
	fmt.Fprintf(p.w, "%s\n", b)
}

// Started prints that a run started, with the tools it was given.
func (p *Printer) Started(info *commands.RunInfo) {
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

// Step prints a step's outcome: its results, or the tickets it awaits
// with the commands that answer them.
func (p *Printer) Step(out *commands.StepOutcome) {
	if p.json {
		p.emit(out)
		return
	}
	if !out.Final {
		fmt.Fprintf(p.w, "step %d awaits a human:\n", out.Step)
		for _, t := range out.Tickets {
			fmt.Fprintf(p.w, "  ticket %s  %s %s  (engine approve %s%s / engine reject %s%s)\n", t.ID, t.Tool, t.CallID, t.ID, p.Conn, t.ID, p.Conn)
		}
		return
	}
	fmt.Fprintf(p.w, "step %d\n", out.Step)
	for _, r := range out.Results {
		fmt.Fprintf(p.w, "  %-4s %-10s %-7s %s\n", r.CallID, r.Tool, r.Verdict, OneLine(r.Content, 100))
	}
}

// Note prints a remark about run (as a "note" event in JSON).
func (p *Printer) Note(run, text string) {
	if p.json {
		p.emit(map[string]any{"run": run, "event": "note", "text": text})
		return
	}
	fmt.Fprintln(p.w, text)
}

// Ended prints how a run ended and after how many steps.
func (p *Printer) Ended(s *sgclient.RunSummary) {
	if p.json {
		p.emit(map[string]any{"run": s.ID, "event": "ended", "cause": s.Cause, "steps": s.Steps})
		return
	}
	fmt.Fprintf(p.w, "run %s ended: %s after %d steps\n", s.ID, s.Cause, s.Steps)
}
