package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection"
)

// maxSide bounds the text a divergence shows of one side.
const maxSide = 200

// side is what call c shows of the difference k: the call itself, its
// verdict or its result; "" for no call.
func side(c *projection.Call, k DiffKind) string {
	if c == nil {
		return ""
	}
	switch k {
	case DiffVerdict:
		return verdictLine(c.Decision)
	case DiffResult:
		return resultLine(c.Result)
	}
	return callLine(c)
}

// callLine is a call as "tool {args}".
func callLine(c *projection.Call) string {
	args := c.Args
	var buf bytes.Buffer
	if json.Compact(&buf, c.Args) == nil {
		args = buf.Bytes()
	}
	if len(args) == 0 {
		return clip(c.Tool)
	}
	return clip(c.Tool + " " + string(args))
}

// stepLine lists a step's calls.
func stepLine(s *projection.Step) string {
	parts := make([]string, len(s.Calls))
	for i := range s.Calls {
		parts[i] = callLine(&s.Calls[i])
	}
	return clip(strings.Join(parts, "; "))
}

// verdictLine is a verdict with its rule: "allow (bash * allow, user)".
func verdictLine(d *events.PermissionDecided) string {
	if d == nil {
		return "undecided"
	}
	if d.Rule == nil {
		return d.Verdict
	}
	r := d.Rule
	if r.Source == "" {
		return fmt.Sprintf("%s (%s %s %s)", d.Verdict, r.Action, r.Resource, r.Effect)
	}
	return fmt.Sprintf("%s (%s %s %s, %s)", d.Verdict, r.Action, r.Resource, r.Effect, r.Source)
}

// resultLine is a result's text parts (media parts as their type), marked
// when it is an error.
func resultLine(r *events.ToolResultRecorded) string {
	if r == nil {
		return "no result"
	}
	var b strings.Builder
	if r.IsError {
		b.WriteString("error: ")
	}
	for i, p := range r.Parts {
		if i > 0 {
			b.WriteString(" | ")
		}
		if p.Type == "text" {
			b.WriteString(p.Text)
		} else {
			fmt.Fprintf(&b, "[%s %s, %d bytes]", p.Type, p.MIME, len(p.Data))
		}
	}
	if len(r.Parts) == 0 && len(r.Structured) > 0 {
		b.Write(r.Structured)
	}
	return clip(b.String())
}

// clip shortens s to maxSide bytes on a rune boundary, one line.
func clip(s string) string {
	s = strings.ReplaceAll(s, "\n", `\n`)
	if len(s) <= maxSide {
		return s
	}
	cut := maxSide
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
