package client

import (
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"
)

// The server's refusals, as nats.go hands them to the error handler, name
// the refused subject; nothing else is taken for a refusal.
func TestParseViolation(t *testing.T) {
	tests := []struct {
		why  string
		err  error
		want violation
		ok   bool
	}{
		{"a refused publish", fmt.Errorf("%w: %s", nats.ErrPermissionViolation, `Permissions Violation for Publish to "stepgate.tickets"`),
			violation{subject: "stepgate.tickets"}, true},
		{"a refused inbox", fmt.Errorf("%w: %s", nats.ErrPermissionViolation, `Permissions Violation for Subscription to "_INBOX.abc"`),
			violation{subject: "_INBOX.abc", inbox: true}, true},
		{"a refused queue subscription", fmt.Errorf("%w: %s", nats.ErrPermissionViolation, `Permissions Violation for Subscription to "_INBOX.abc" using queue "q" (sid "4")`),
			violation{subject: "_INBOX.abc", inbox: true}, true},
		{"a refused reply subject", fmt.Errorf("%w: %s", nats.ErrPermissionViolation, `Permissions Violation for Publish with Reply of "_INBOX.x"`),
			violation{subject: "_INBOX.x", inbox: true}, true},
		{"the text without the sentinel", errors.New(`Permissions Violation for Publish to "stepgate.tickets"`), violation{}, false},
		{"another error", nats.ErrSlowConsumer, violation{}, false},
		{"an unquoted subject", fmt.Errorf("%w: %s", nats.ErrPermissionViolation, `Permissions Violation for Publish to stepgate.tickets`), violation{}, false},
		{"an empty subject", fmt.Errorf("%w: %s", nats.ErrPermissionViolation, `Permissions Violation for Publish to ""`), violation{}, false},
		{"nil", nil, violation{}, false},
	}
	for _, tt := range tests {
		got, ok := parseViolation(tt.err)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: parseViolation(%v) = %+v, %v; want %+v, %v", tt.why, tt.err, got, ok, tt.want, tt.ok)
		}
	}
}

// FuzzParseViolation: any text after the server's prefix parses or is
// refused without a panic, and a subject it returns has no space in it.
func FuzzParseViolation(f *testing.F) {
	f.Add(`Permissions Violation for Publish to "stepgate.tickets"`)
	f.Add(`Permissions Violation for Subscription to "_INBOX.a.b" using queue "q"`)
	f.Add(`Permissions Violation for Publish with Reply of "_INBOX.x"`)
	f.Fuzz(func(t *testing.T, text string) {
		v, ok := parseViolation(fmt.Errorf("%w: %s", nats.ErrPermissionViolation, text))
		if ok && (v.subject == "" || len(v.subject) > len(text)) {
			t.Fatalf("parseViolation(%q) = %+v", text, v)
		}
	})
}
