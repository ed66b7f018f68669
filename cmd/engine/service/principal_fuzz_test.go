package service

import (
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
)

// Whatever the header holds, the principal is nobody or a well-formed
// nats:ACCOUNT[/USER] that an overseer of its account covers and an
// overseer of another account does not.
func FuzzPrincipalFromRequestInfo(f *testing.F) {
	for _, s := range []string{`{"acc":"A","user":"a"}`, `{"acc":"A"}`, `{"acc":"A/B"}`, `{"acc":""}`, `null`, `[]`, `{"acc":1}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		p := PrincipalFromRequestInfo(nats.Header{RequestInfoHeader: []string{raw}})
		if p == "" {
			return
		}
		rest, ok := strings.CutPrefix(p, "nats:")
		acc, _, _ := strings.Cut(rest, "/")
		if !ok || acc == "" || len(p) > maxPrincipal {
			t.Fatalf("principal %q of %q", p, raw)
		}
		if !(Overseer{Principal: "nats:" + acc}).covers(p) {
			t.Fatalf("an overseer of account %q does not cover %q", acc, p)
		}
		if (Overseer{Principal: "nats:" + acc + "x"}).covers(p) {
			t.Fatalf("an overseer of account %q covers %q", acc+"x", p)
		}
	})
}

// A parsed overseer is a principal and its non-empty projects; nothing
// panics.
func FuzzParseOverseer(f *testing.F) {
	for _, s := range []string{"nats:OPS", "nats:A/u=web,api", "nats:A=", "x", "nats:/u", "nats:A=,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseOverseer(s)
		if err != nil {
			return
		}
		if !strings.HasPrefix(o.Principal, "nats:") || len(o.Principal) == len("nats:") {
			t.Fatalf("%q parsed as %+v", s, o)
		}
		for _, p := range o.Projects {
			if p == "" {
				t.Fatalf("%q parsed with an empty project", s)
			}
		}
	})
}
