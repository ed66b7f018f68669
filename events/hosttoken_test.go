package events

import (
	"strings"
	"testing"
)

// FuzzHostToken: every host name has one token, a single subject token
// (no dot, space, wildcard or control character), and distinct names have
// distinct tokens.
func FuzzHostToken(f *testing.F) {
	for _, s := range []string{"h1", "vm-1.example.com", "a b", "*", ">", "", "=x", "é", strings.Repeat("x", 200)} {
		f.Add(s, s+".")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		ta, tb := HostToken(a), HostToken(b)
		if ta == "" || strings.ContainsAny(ta, ". \t\r\n*>") {
			t.Fatalf("token %q of %q is not one subject token", ta, a)
		}
		if a != b && ta == tb {
			t.Fatalf("%q and %q share the token %q", a, b, ta)
		}
	})
}
