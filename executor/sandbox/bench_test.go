//go:build linux

package sandbox_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stepgate/stepgate/executor/sandbox"
)

// buildHelper builds cmd/stepgate-sandbox, the small helper binary, or
// skips (no go tool, or a build cache this user cannot write).
func buildHelper(tb testing.TB) string {
	tb.Helper()
	out := filepath.Join(tb.TempDir(), "stepgate-sandbox")
	if b, err := exec.Command("go", "build", "-o", out, "github.com/stepgate/stepgate/cmd/stepgate-sandbox").CombinedOutput(); err != nil {
		tb.Skipf("cannot build the helper binary: %v\n%s", err, b)
	}
	return out
}

// BenchmarkTrue is the cost of the helper: `true` run as it is, in the
// sandbox through this binary re-executed, through the small helper
// binary (workspace-write, no network), and through a warm helper of a
// Pool (its first call, the helper's start, before the clock).
func BenchmarkTrue(b *testing.B) {
	loc := b.TempDir()
	ws := sandbox.Policy{Mode: sandbox.WorkspaceWrite, Location: loc}
	helper := buildHelper(b)
	for _, bc := range []struct {
		name string
		p    sandbox.Policy
		opts []sandbox.Option
	}{
		{"off", sandbox.Policy{Mode: sandbox.Off}, nil},
		{"workspace-write", ws, nil},
		{"workspace-write-small-helper", ws, []sandbox.Option{sandbox.WithHelper(helper)}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			if bc.p.Mode != sandbox.Off {
				canSandbox(b)
			}
			pl := sandbox.NewPool(bc.opts...)
			defer pl.Close()
			b.Run("pooled", func(b *testing.B) {
				for b.Loop() {
					c, err := pl.Command(bc.p, []string{"true"}, loc, os.Environ())
					if err != nil {
						b.Fatal(err)
					}
					if err := c.Run(); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
		b.Run(bc.name, func(b *testing.B) {
			if bc.p.Mode != sandbox.Off {
				canSandbox(b)
			}
			for b.Loop() {
				c, err := sandbox.Command(bc.p, []string{"true"}, loc, os.Environ(), bc.opts...)
				if err != nil {
					b.Fatal(err)
				}
				if err := c.Run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestSmallHelper: the small helper binary runs a command in the sandbox
// as this binary's helper stage does.
func TestSmallHelper(t *testing.T) {
	canSandbox(t)
	helper := buildHelper(t)
	loc := t.TempDir()
	c, err := sandbox.Command(sandbox.Policy{Mode: sandbox.WorkspaceWrite, Location: loc},
		[]string{"bash", "-c", "echo in > f && cat f; echo x > /etc/stepgate-x"}, loc, os.Environ(), sandbox.WithHelper(helper))
	must(t, err)
	out, _ := c.CombinedOutput()
	if string(out) != "in\nbash: line 1: /etc/stepgate-x: Read-only file system\n" || c.Enforced().LandlockABI < 1 {
		t.Fatalf("%q %+v", out, c.Enforced())
	}
}
