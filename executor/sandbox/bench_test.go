package sandbox_test

import (
	"os"
	"testing"

	"github.com/stepgate/stepgate/executor/sandbox"
)

// BenchmarkTrue is the cost of the helper: `true` run as it is and in the
// sandbox (workspace-write, no network).
func BenchmarkTrue(b *testing.B) {
	loc := b.TempDir()
	for _, p := range []sandbox.Policy{{Mode: sandbox.Off}, {Mode: sandbox.WorkspaceWrite, Location: loc}} {
		b.Run(string(p.Mode), func(b *testing.B) {
			if p.Mode != sandbox.Off {
				if h := sandbox.Probe(); h.LandlockABI < 1 || !h.UserNS {
					b.Skipf("this host cannot sandbox: %+v", h)
				}
			}
			for b.Loop() {
				c, err := sandbox.Command(p, []string{"true"}, loc, os.Environ())
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
