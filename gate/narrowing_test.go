package gate

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

func TestNarrow(t *testing.T) {
	tests := []struct {
		why  string
		in   []Narrowing
		want Narrowing
	}{
		{"nothing narrows: configured", nil, Configured},
		{"all configured: configured", []Narrowing{Configured, Configured}, Configured},
		{"one deny-all absorbs", []Narrowing{Configured, DenyAll, Configured}, DenyAll},
		{"deny-all alone", []Narrowing{DenyAll}, DenyAll},
		{"an unknown value fails closed", []Narrowing{Configured, Narrowing(7)}, DenyAll},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Narrow(tt.in...)); diff != "" {
			t.Errorf("%s: Narrow(%v) mismatch (-want +got):\n%s", tt.why, tt.in, diff)
		}
	}
}

func genNarrowing() *rapid.Generator[Narrowing] {
	return rapid.SampledFrom([]Narrowing{Configured, DenyAll})
}

func TestNarrowAlgebra(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, b, c := genNarrowing().Draw(t, "a"), genNarrowing().Draw(t, "b"), genNarrowing().Draw(t, "c")
		if got := Narrow(a, DenyAll); got != DenyAll {
			t.Fatalf("Narrow(%v, deny_all) = %v: DenyAll must absorb", a, got)
		}
		if got := Narrow(DenyAll, a); got != DenyAll {
			t.Fatalf("Narrow(deny_all, %v) = %v: DenyAll must absorb", a, got)
		}
		if got := Narrow(a, Configured); got != a {
			t.Fatalf("Narrow(%v, configured) = %v: Configured must be the identity", a, got)
		}
		if got := Narrow(Configured, a); got != a {
			t.Fatalf("Narrow(configured, %v) = %v: Configured must be the identity", a, got)
		}
		if x, y := Narrow(a, b), Narrow(b, a); x != y {
			t.Fatalf("Narrow(%v, %v) = %v but Narrow(%v, %v) = %v: not commutative", a, b, x, b, a, y)
		}
		if x, y := Narrow(Narrow(a, b), c), Narrow(a, Narrow(b, c)); x != y {
			t.Fatalf("Narrow(Narrow(%v, %v), %v) = %v but Narrow(%v, Narrow(%v, %v)) = %v: not associative", a, b, c, x, a, b, c, y)
		}
		if x, y := Narrow(a, b, c), Narrow(Narrow(a, b), c); x != y {
			t.Fatalf("Narrow(%v, %v, %v) = %v, want the pairwise %v", a, b, c, x, y)
		}
		if got := Narrow(a, a); got != a {
			t.Fatalf("Narrow(%v, %v) = %v: not idempotent", a, a, got)
		}
	})
}

func TestNarrowOnlyNarrows(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ns := rapid.SliceOf(genNarrowing()).Draw(t, "ns")
		extra := genNarrowing().Draw(t, "extra")
		if Narrow(ns...) == DenyAll && Narrow(append(ns, extra)...) != DenyAll {
			t.Fatalf("adding %v to %v widened deny_all", extra, ns)
		}
	})
}

func TestNarrowingText(t *testing.T) {
	tests := []struct {
		why  string
		n    Narrowing
		want string
	}{
		{"the zero value is configured", Narrowing(0), "configured"},
		{"deny-all", DenyAll, "deny_all"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.n.String()); diff != "" {
			t.Errorf("%s: String() mismatch (-want +got):\n%s", tt.why, diff)
		}
		b, err := json.Marshal(tt.n)
		if err != nil {
			t.Fatalf("%s: Marshal: %v", tt.why, err)
		}
		if diff := cmp.Diff(`"`+tt.want+`"`, string(b)); diff != "" {
			t.Errorf("%s: JSON mismatch (-want +got):\n%s", tt.why, diff)
		}
		got := Narrowing(42)
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%s: Unmarshal(%s): %v", tt.why, b, err)
		}
		if diff := cmp.Diff(tt.n, got); diff != "" {
			t.Errorf("%s: round trip mismatch (-want +got):\n%s", tt.why, diff)
		}
	}
}

func TestNarrowingTextRejectsUnknown(t *testing.T) {
	if got, want := Narrowing(7).String(), "Narrowing(7)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if _, err := json.Marshal(Narrowing(7)); !errors.Is(err, ErrUnknownNarrowing) {
		t.Errorf("Marshal(Narrowing(7)) error = %v, want ErrUnknownNarrowing", err)
	}
	for _, text := range []string{`"deny-all"`, `"Configured"`, `""`, `"allow"`} {
		n := DenyAll
		err := json.Unmarshal([]byte(text), &n)
		if !errors.Is(err, ErrUnknownNarrowing) {
			t.Errorf("Unmarshal(%s) error = %v, want ErrUnknownNarrowing", text, err)
		}
		if n != DenyAll {
			t.Errorf("Unmarshal(%s) changed the value to %v", text, n)
		}
	}
}
