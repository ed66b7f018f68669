package step

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// A holder record is refused unless it is one of ours under its own key:
// version 1, its host's key, at most 64 globs, each a clean absolute path.
func TestDecodeHolderRefuses(t *testing.T) {
	ok := `{"v":1,"host":"h1","locations":["/srv/ws/*"],"at":"2026-01-01T00:00:00Z"}`
	if h, err := DecodeHolder("h1", []byte(ok)); err != nil || h.Host != "h1" || !slices.Equal(h.Locations, []string{"/srv/ws/*"}) {
		t.Fatalf("a good record: %+v, %v", h, err)
	}
	many := `{"v":1,"host":"h1","locations":["/a"` + strings.Repeat(`,"/a"`, maxHolderGlobs) + `]}`
	for _, tc := range []struct{ why, key, data string }{
		{"another key", "h2", ok},
		{"another version", "h1", `{"v":2,"host":"h1"}`},
		{"an unknown field", "h1", `{"v":1,"host":"h1","holds":["/x"]}`},
		{"a relative glob", "h1", `{"v":1,"host":"h1","locations":["ws/*"]}`},
		{"an unclean glob", "h1", `{"v":1,"host":"h1","locations":["/srv/../etc/*"]}`},
		{"too many globs", "h1", many},
		{"no host", "", `{"v":1}`},
		{"too large", "h1", `{"v":1,"host":"h1","instance":"` + strings.Repeat("x", maxHolderRecord) + `"}`},
	} {
		if _, err := DecodeHolder(tc.key, []byte(tc.data)); !errors.Is(err, ErrBadHolder) {
			t.Errorf("%s: DecodeHolder = %v, want ErrBadHolder", tc.why, err)
		}
	}
}

// FuzzDecodeHolder: any bytes under any key decode to a record that
// belongs to that key, has only clean absolute globs and round-trips, or to
// ErrBadHolder; never a panic.
func FuzzDecodeHolder(f *testing.F) {
	f.Add("h1", []byte(`{"v":1,"host":"h1","locations":["/srv/ws/*"],"at":"2026-01-01T00:00:00Z"}`))
	f.Add("=YS4uYg", []byte(`{"v":1,"host":"a..b","instance":"x","at":"2026-01-01T00:00:00Z"}`))
	f.Add("h1", []byte(`{"v":1,"host":"h1","locations":["/a/**","relative"]}`))
	f.Fuzz(func(t *testing.T, key string, data []byte) {
		h, err := DecodeHolder(key, data)
		if err != nil {
			if !errors.Is(err, ErrBadHolder) {
				t.Fatalf("error %v is not ErrBadHolder", err)
			}
			return
		}
		if LeaseKey(h.Host) != key || len(h.Locations) > maxHolderGlobs {
			t.Fatalf("record %+v decoded under key %q", h, key)
		}
		b, err := EncodeHolder(h)
		if err != nil {
			t.Fatal(err)
		}
		again, err := DecodeHolder(key, b)
		if err != nil || again.Host != h.Host || !slices.Equal(again.Locations, h.Locations) || !again.At.Equal(h.At) {
			t.Fatalf("round trip: %+v, %v; want %+v", again, err, h)
		}
	})
}
