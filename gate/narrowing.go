package gate

import (
	"fmt"
	"strconv"
)

// Narrowing is the capability left to a run after run options, plugins and
// executors have narrowed it. None of them can widen it. The zero value is
// [Configured].
type Narrowing int

// The capabilities.
const (
	// Configured leaves calls to the configured rules.
	Configured Narrowing = iota
	// DenyAll advertises no tool and blocks every call.
	DenyAll
)

// Narrow combines narrowings: the result is Configured only when every input
// is Configured (so Narrow() is Configured), and DenyAll otherwise. A value
// that is neither constant counts as DenyAll.
func Narrow(ns ...Narrowing) Narrowing {
	for _, n := range ns {
		if n != Configured {
			return DenyAll
		}
	}
	return Configured
}

// String returns "configured" or "deny_all", or Narrowing(N) for another value.
func (n Narrowing) String() string {
	if t, ok := n.text(); ok {
		return t
	}
	return "Narrowing(" + strconv.Itoa(int(n)) + ")"
}

func (n Narrowing) text() (string, bool) {
	switch n {
	case Configured:
		return "configured", true
	case DenyAll:
		return "deny_all", true
	}
	return "", false
}

// MarshalText encodes n as "configured" or "deny_all". Any other value is an
// error wrapping [ErrUnknownNarrowing].
func (n Narrowing) MarshalText() ([]byte, error) {
	t, ok := n.text()
	if !ok {
		return nil, fmt.Errorf("marshal narrowing %d: %w", int(n), ErrUnknownNarrowing)
	}
	return []byte(t), nil
}

// UnmarshalText decodes "configured" or "deny_all". Any other text is an
// error wrapping [ErrUnknownNarrowing], and leaves n unchanged.
func (n *Narrowing) UnmarshalText(text []byte) error {
	switch string(text) {
	case "configured":
		*n = Configured
	case "deny_all":
		*n = DenyAll
	default:
		return fmt.Errorf("unmarshal narrowing %q: %w", text, ErrUnknownNarrowing)
	}
	return nil
}
