//go:build linux

package sandbox_test

import (
	"testing"

	"github.com/stepgate/stepgate/executor/sandbox"
)

// via is how a test builds its commands: one-shot (sandbox.Command, a
// helper per command) or pooled (sandbox.Pool.Command, what steps use).
// Pooled, each command runs on a helper that already ran a call of the
// same policy (a `true` first), so the suite holds on a warm helper.
type via struct {
	t      *testing.T
	pool   *sandbox.Pool // nil: one-shot
	warmed map[string]bool
}

// eachVia runs f one-shot, then pooled (a pool of its own, closed when
// the subtest ends).
func eachVia(t *testing.T, f func(t *testing.T, v *via)) {
	t.Run("one-shot", func(t *testing.T) { f(t, &via{t: t}) })
	t.Run("pooled", func(t *testing.T) {
		pl := sandbox.NewPool()
		t.Cleanup(func() { _ = pl.Close() })
		f(t, &via{t: t, pool: pl, warmed: map[string]bool{}})
	})
}

// command is sandbox.Command, or the pool's Command on a warm helper.
func (v *via) command(p sandbox.Policy, argv []string, dir string, environ []string) (*sandbox.Cmd, error) {
	if v.pool == nil {
		return sandbox.Command(p, argv, dir, environ)
	}
	if p.Mode != sandbox.Off {
		key := p.Location + "\x00" + dir + "\x00" + string(p.Network)
		if !v.warmed[key] {
			v.warmed[key] = true
			// A refusal here is the command's too (the test sees it there).
			if c, err := v.pool.Command(p, []string{"true"}, dir, environ); err == nil {
				_ = c.Run()
			}
		}
	}
	return v.pool.Command(p, argv, dir, environ)
}
