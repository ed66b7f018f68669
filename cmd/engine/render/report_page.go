package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"strings"
	"time"

	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/events"
)

// reportResultCap bounds the result text one call shows in the page; the
// rest is in `engine show --json`.
const reportResultCap = 16 << 10

// reportPage is what the report template reads: the show document and
// what the page adds to it (the chart's geometry, pretty arguments, the
// full result text, the tickets in one table).
type reportPage struct {
	Doc *Show
	// CSP and Script are the page's policy and its script.
	CSP     string
	Script  template.JS
	Status  string
	Steps   []reportStep
	Calls   int
	Tickets []reportTicket
	// Window is the chart's time span (zero when the run was not timed).
	Window time.Duration
	// Verdicts counts the calls by verdict class, for the legend.
	Verdicts []reportCount
	// Usage is the token usage of the run's model turns, all told.
	Usage events.ModelUsage
}

type reportStep struct {
	*StepView
	Calls []reportCall
}

type reportCall struct {
	*CallView
	Step  int
	Class string
	// Bar and Wait place the call's run and its ticket's wait on the
	// chart (empty: not timed).
	Bar, Wait  template.CSS
	Args       string
	ResultText string
	Truncated  int
}

type reportTicket struct {
	Step   int
	Call   *CallView
	Ticket *TicketView
}

type reportCount struct {
	Class, Name string
	N           int
}

// verdictClass is the CSS class of a verdict: one of a fixed set, whatever
// the log holds.
func verdictClass(v string) string {
	switch v {
	case events.VerdictAllow, events.VerdictBlock, events.VerdictConfirm, events.VerdictReject:
		return "v-" + v
	case "":
		return "v-none"
	}
	return "v-other"
}

// replyClass is the CSS class of a ticket's reply.
func replyClass(r string) string {
	switch r {
	case events.ReplyOnce, events.ReplyAlways, events.ReplyAnswer, events.ResolvedAuto:
		return "v-allow"
	case events.ReplyReject, events.ResolvedCascade:
		return "v-block"
	}
	return "v-confirm"
}

// connClass is the CSS class of a proxied connection's verdict.
func connClass(v string) string {
	if v == "allowed" {
		return "v-allow"
	}
	return "v-block"
}

func buildReportPage(d *Show) *reportPage {
	p := &reportPage{Doc: d, Status: d.Status, CSP: reportCSP(), Script: template.JS(reportScript)}
	for _, t := range d.Turns {
		p.Usage.InputTokens += t.Usage.InputTokens
		p.Usage.OutputTokens += t.Usage.OutputTokens
	}
	if d.End != nil {
		p.Status += " (" + d.End.Cause + ")"
	}
	var start time.Time
	if tl := d.Timeline; tl.Started != nil && tl.Ended != nil && tl.Ended.After(*tl.Started) {
		start, p.Window = *tl.Started, tl.Ended.Sub(*tl.Started)
	}
	counts := map[string]int{}
	for i := range d.Timeline.Steps {
		s := &d.Timeline.Steps[i]
		rs := reportStep{StepView: s}
		for j := range s.Calls {
			c := &s.Calls[j]
			rc := reportCall{CallView: c, Step: s.N, Class: verdictClass(c.Verdict), Args: prettyArgs(c.Args)}
			rc.ResultText, rc.Truncated = resultText(d.Run, i, j)
			if p.Window > 0 {
				rc.Bar = bar(start, p.Window, c.RequestedAt, c.ResultAt)
				if c.Ticket != nil {
					rc.Wait = bar(start, p.Window, c.Ticket.IssuedAt, c.Ticket.ResolvedAt)
				}
			}
			if c.Ticket != nil {
				p.Tickets = append(p.Tickets, reportTicket{Step: s.N, Call: c, Ticket: c.Ticket})
			}
			counts[rc.Class]++
			rs.Calls = append(rs.Calls, rc)
			p.Calls++
		}
		p.Steps = append(p.Steps, rs)
	}
	for _, c := range []string{"v-allow", "v-confirm", "v-block", "v-reject", "v-other", "v-none"} {
		if counts[c] > 0 {
			p.Verdicts = append(p.Verdicts, reportCount{c, strings.TrimPrefix(c, "v-"), counts[c]})
		}
	}
	return p
}

// bar is the CSS that places [from, to] on a chart of window from start:
// a left offset and a width in percent, computed here from times alone
// (no recorded string reaches it). A missing end is drawn as a tick.
func bar(start time.Time, window time.Duration, from, to *time.Time) template.CSS {
	if from == nil {
		return ""
	}
	pct := func(t time.Time) float64 {
		f := float64(t.Sub(start)) / float64(window) * 100
		return min(max(f, 0), 100)
	}
	left, width := pct(*from), 0.0
	if to != nil {
		width = max(pct(*to)-left, 0)
	}
	return template.CSS(fmt.Sprintf("left:%.3f%%;width:%.3f%%", left, width))
}

// prettyArgs indents a call's arguments (as recorded when they are not
// JSON).
func prettyArgs(m json.RawMessage) string {
	if len(m) == 0 {
		return ""
	}
	var b bytes.Buffer
	if err := json.Indent(&b, m, "", "  "); err != nil {
		return string(m)
	}
	return b.String()
}

// resultText is the text of the result of the run's step i, call j (the
// show document's preview is one line), at most reportResultCap bytes, and
// how many bytes it left out.
func resultText(r *sgclient.Run, i, j int) (string, int) {
	if r == nil || i >= len(r.Steps) || j >= len(r.Steps[i].Calls) || r.Steps[i].Calls[j].Result == nil {
		return "", 0
	}
	var b strings.Builder
	for _, part := range r.Steps[i].Calls[j].Result.Parts {
		if part.Type != "text" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(part.Text)
	}
	s := b.String()
	if len(s) <= reportResultCap {
		return s, 0
	}
	cut := reportResultCap
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut], len(s) - cut
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
