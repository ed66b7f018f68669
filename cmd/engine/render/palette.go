package render

import "github.com/stepgate/stepgate/events"

// Palette colours a timeline: ANSI escapes when On (a terminal), nothing
// otherwise.
type Palette struct{ On bool }

const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiDim    = "\x1b[2m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
)

func (p Palette) paint(code, s string) string {
	if !p.On || s == "" {
		return s
	}
	return code + s + ansiReset
}

// verdict colours a verdict or a ticket's reply: green what let the call
// run, red what refused it, yellow what waited or lapsed.
func (p Palette) verdict(v string) string {
	switch v {
	case events.VerdictAllow, events.ReplyOnce, events.ReplyAlways, events.ReplyAnswer, events.ResolvedAuto:
		return p.paint(ansiGreen, v)
	case events.VerdictBlock, events.VerdictReject, events.ResolvedCascade:
		return p.paint(ansiRed, v)
	}
	return p.paint(ansiYellow, v)
}
