package render

import (
	"fmt"
	"strings"
	"time"

	"github.com/stepgate/stepgate/events"
)

// stamp is a time as a timeline shows it: UTC, to the millisecond.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// span is a duration rounded to the millisecond.
func span(d time.Duration) string { return d.Round(time.Millisecond).String() }

// size is a byte count as a person reads it.
func size(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1024*1024))
}

// sandboxFact says what the sandbox enforced on a call: its mode, network,
// Landlock's ABI, seccomp, the namespaces it entered.
func sandboxFact(sb *events.SandboxRecord) string {
	s := "sandbox " + sb.Mode + ", network " + sb.Network
	if sb.LandlockABI > 0 {
		s += fmt.Sprintf(", landlock %d", sb.LandlockABI)
	}
	if sb.Seccomp {
		s += ", seccomp"
	}
	if len(sb.Namespaces) > 0 {
		s += ", namespaces " + strings.Join(sb.Namespaces, " ")
	}
	if sb.Refused != nil {
		s += ", refused " + sb.Refused.Kind
	}
	if sb.Escalated != "" {
		s += ", escalated by " + sb.Escalated
	}
	return s
}

// pinnedText is a run's pinned profile as a line ("off" for none).
func pinnedText(p *events.SandboxProfile) string {
	if p == nil {
		return "off"
	}
	return p.String()
}

// suffix is s when ok, else "".
func suffix(s string, ok bool) string {
	if ok {
		return s
	}
	return ""
}

// OneLine shortens s to one line of at most n runes for a terminal: its
// newlines shown as ⏎, what is cut off as an ellipsis.
func OneLine(s string, n int) string {
	s = strings.ReplaceAll(strings.TrimSpace(s), "\n", " ⏎ ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
