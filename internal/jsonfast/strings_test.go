package jsonfast

import (
	"testing"

	"pgregory.net/rapid"
)

// plain8 says "nothing to escape" exactly when no byte of the eight needs it.
func TestPlain8AgreesWithBytewise(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := rapid.SliceOfN(rapid.OneOf(rapid.Byte(), rapid.SampledFrom([]byte{0x1f, 0x20, '"', '\\', 0x7f, 0x80, 'a'})), 8, 8).Draw(t, "bytes")
		want := true
		for _, c := range b {
			want = want && c >= 0x20 && c < 0x80 && c != '"' && c != '\\'
		}
		if got := plain8(load8(string(b))); got != want {
			t.Fatalf("plain8(%q) = %v, want %v", b, got, want)
		}
	})
}
