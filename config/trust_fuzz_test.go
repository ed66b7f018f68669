package config

import (
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stepgate/stepgate/gate"
)

// FuzzTrustedProjects: a trusted_projects entry the user's file is allowed
// is an absolute, clean directory without wildcards that trusts itself
// (and no other written form of a wildcard); a project file's is always
// an error, and any error is ErrInvalid naming the file.
func FuzzTrustedProjects(f *testing.F) {
	for _, s := range []string{"/srv/app", "~/src/app", "$HOME", "~", "rel/dir", "/srv/*", "/a/../b/", "~me/x", "/x\x00y", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dir string) {
		t.Setenv("HOME", "/home/me")
		text := "trusted_projects: [" + strconv.Quote(dir) + "]\n"
		if _, err := Parse("p.yaml", []byte(text), gate.SourceProject); err == nil {
			t.Fatalf("a project file trusted %q", dir)
		}
		u, err := Parse("u.yaml", []byte(text), gate.SourceUser)
		if err != nil {
			if !errors.Is(err, ErrInvalid) || !strings.HasPrefix(err.Error(), "u.yaml:") {
				t.Fatalf("error %v: want ErrInvalid naming the file", err)
			}
			return
		}
		for _, d := range u.trustedProjects {
			if !filepath.IsAbs(d) || filepath.Clean(d) != d || strings.ContainsAny(d, "*?[\x00") {
				t.Fatalf("%q accepted as %q: want an absolute, clean directory without wildcards", dir, d)
			}
			if !trusts(u.trustedProjects, d) {
				t.Fatalf("%q does not trust itself", d)
			}
		}
	})
}
