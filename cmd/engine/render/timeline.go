package render

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection"
)

// Timeline prints a run as a person reads it: every step, every call with
// its verdict, the rule that decided and its layer (or the saved grant),
// its ticket and how it was answered, its result with its size, the host
// that ran it and spilled files, the state it set and how long it took;
// then the todos.
func Timeline(w io.Writer, d *Show, p Palette) {
	r := d.Run
	status := r.Status
	if r.End != nil {
		status += " (" + r.End.Cause + ")"
	}
	fmt.Fprintf(w, "%s %s  agent %s  %s\n", p.paint(ansiBold, "run"), p.paint(ansiBold, r.ID), r.Snapshot.Agent, status)
	fmt.Fprintf(w, "  location %s  project %s  engine %s  policy %.12s", r.Snapshot.Location, r.Snapshot.Project, r.Snapshot.EngineVersion, r.Snapshot.PolicyDigest)
	if v := r.Snapshot.ConfigVersion; v > 0 {
		fmt.Fprintf(w, "  fleet config version %d", v) // else its host's own user file
	}
	fmt.Fprintln(w)
	if sb := r.Snapshot.Sandbox; sb != nil {
		fmt.Fprintf(w, "  sandbox %s\n", sb)
	}
	timelineModel(w, r, p)
	tl := d.Timeline
	if tl.Started != nil && tl.Ended != nil {
		fmt.Fprintf(w, "  from %s to %s (%s)\n", stamp(*tl.Started), stamp(*tl.Ended), span(tl.Ended.Sub(*tl.Started)))
	}
	if r.Diverged != nil {
		fmt.Fprintf(w, "  %s: its history lost a write; it takes no more steps: %s\n", p.paint(ansiRed, "DIVERGED"), (*projection.Divergence)(r.Diverged))
	}
	for _, s := range tl.Steps {
		final := "final"
		if !s.Final {
			final = "open"
		}
		at := ""
		if s.At != nil {
			at = "  " + p.paint(ansiDim, stamp(*s.At))
		}
		if t := turnOf(r, s.N); t != nil {
			timelineTurn(w, *t, p)
		}
		fmt.Fprintf(w, "  step %d (%s)%s\n", s.N, final, at)
		for _, c := range s.Calls {
			timelineCall(w, c, r.Snapshot.Sandbox, p)
		}
	}
	for n := len(tl.Steps) + 1; n <= len(r.Turns); n++ { // a turn whose step is not there: the answer, or one not submitted yet
		timelineTurn(w, r.Turns[n-1], p)
	}
	timelineTodos(w, tl.Todos)
}

func timelineCall(w io.Writer, c CallView, pinned *events.SandboxProfile, p Palette) {
	fmt.Fprintf(w, "    %s %s %s\n", c.ID, p.paint(ansiBold, c.Tool), OneLine(string(c.Args), 80))
	if c.Verdict != "" {
		rule := ""
		if c.Rule != nil {
			rule = fmt.Sprintf(" · rule %s %q %s (%s)", c.Rule.Action, c.Rule.Resource, c.Rule.Effect, c.Source)
		}
		if g := c.Grant; g != nil {
			rule += " · " + grantLine(g)
		}
		fmt.Fprintf(w, "      verdict %s%s\n", p.verdict(c.Verdict), rule)
	}
	if t := c.Ticket; t != nil {
		fmt.Fprintf(w, "      ticket %s (%s)%s\n", t.ID, t.Kind, ticketLine(t, p))
	}
	if c.Attempts > 0 && c.Result == nil {
		fmt.Fprintf(w, "      started (attempt %d)\n", c.Attempts)
	}
	if res := c.Result; res != nil {
		mark := p.paint(ansiGreen, "→")
		if res.IsError {
			mark = p.paint(ansiRed, "✗")
		}
		facts := []string{size(int64(res.Bytes))}
		if c.DurationMS != nil {
			facts = append(facts, "took "+span(time.Duration(*c.DurationMS)*time.Millisecond))
		}
		if c.RanOn != "" {
			facts = append(facts, "ran on "+c.RanOn)
		}
		if sb := c.Sandbox; sb != nil {
			facts = append(facts, sandboxFact(sb))
		}
		fmt.Fprintf(w, "      %s %s  %s\n", mark, res.Preview, p.paint(ansiDim, "["+strings.Join(facts, ", ")+"]"))
		if sb := c.Sandbox; sb != nil {
			for _, n := range sb.Connections {
				fmt.Fprintf(w, "        network %s %s %s%s\n", n.Verdict, n.Form, n.Authority, suffix(" ("+n.Code+")", n.Code != ""))
			}
			if sb.Dropped > 0 {
				fmt.Fprintf(w, "        network: %d more connections, not recorded\n", sb.Dropped)
			}
			if sb.Profile != nil && (pinned == nil || sb.Profile.String() != pinned.String()) {
				fmt.Fprintf(w, "        sandbox %s (the run pinned %s: the host's --sandbox floor tightened it)\n", sb.Profile, pinnedText(pinned))
			}
		}
		for _, f := range res.Files {
			n := ""
			if f.Bytes >= 0 {
				n = " (" + size(f.Bytes) + ")"
			}
			fmt.Fprintf(w, "        spilled to %s%s\n", f.Path, n)
		}
	}
	if len(c.State) > 0 {
		fmt.Fprintf(w, "      state set: %s\n", strings.Join(c.State, ", "))
	}
}

// grantLine names the saved approval that allowed a call.
func grantLine(g *GrantView) string {
	if !g.Found {
		return "grant: none saved now (revoked since?)"
	}
	s := "grant " + g.ID
	if g.Principal != "" {
		s += " saved by " + g.Principal
	}
	if g.SavedAt != nil {
		s += " at " + stamp(*g.SavedAt)
	}
	if g.Revoked {
		s += ", since revoked"
	}
	return s
}

// ticketLine describes how a ticket was answered, for a timeline.
func ticketLine(t *TicketView, p Palette) string {
	if t.Reply == "" {
		return ": " + p.paint(ansiYellow, "pending")
	}
	s := ": " + p.verdict(t.Reply)
	if t.Principal != "" {
		s += " by " + t.Principal
	}
	if t.By != "" {
		s += " (with ticket " + t.By + ")"
	}
	if t.WaitedMS != nil {
		s += " after " + span(time.Duration(*t.WaitedMS)*time.Millisecond)
	}
	if t.Message != "" {
		s += ": " + OneLine(t.Message, 60)
	}
	if t.EditedArgs != nil {
		s += "; arguments edited to " + OneLine(string(t.EditedArgs), 80) + " (the model's: " + OneLine(string(t.OriginalArgs), 80) + ")"
	}
	return s
}

// timelineTodos prints the run's current todo list, when it has one.
func timelineTodos(w io.Writer, t *TodosView) {
	if t == nil {
		return
	}
	if t.Error != "" {
		fmt.Fprintf(w, "  todos: unreadable (%s)\n", t.Error)
		return
	}
	fmt.Fprintf(w, "  todos (%d)\n", len(t.Items))
	for line := range strings.Lines(t.Items.Checklist()) {
		fmt.Fprintf(w, "    %s", line)
	}
}
