package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/commands"
)

// printer writes what a scripted run does, for people or as JSON lines.
type printer struct {
	w    io.Writer
	json bool
	// conn is the connection flags the commands it suggests carry (see
	// connFlags.hint).
	conn string
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
			fmt.Fprintf(p.w, "  ticket %s  %s %s  (engine approve %s%s / engine reject %s%s)\n", t.ID, t.Tool, t.CallID, t.ID, p.conn, t.ID, p.conn)
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
