//go:build linux

package sandbox_test

import (
	"bytes"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/stepgate/stepgate/executor/sandbox"
)

// escape is one attack: its command, how its effect shows from outside
// (nil: the attack program's "ok"), and the exact error the sandbox
// answers it with.
type escape struct {
	name string
	// root: the positive control needs root on the host (as an
	// unprivileged user the attack fails without the sandbox).
	root    bool
	argv    func(w *world) []string
	worked  func(w *world, out string) bool
	refused string
}

func sh(script string) []string { return []string{"bash", "--norc", "--noprofile", "-c", script} }

func (w *world) run(t *testing.T, v *via, p sandbox.Policy, argv []string) (string, error) {
	t.Helper()
	c, err := v.command(p, argv, w.loc, w.environ())
	if err != nil {
		t.Fatalf("Command: %v", err)
	}
	var out bytes.Buffer
	c.Stdin, c.Stdout, c.Stderr = w.ptySlave, &out, &out
	if p.Mode == sandbox.Off {
		// The terminal is the attack's controlling one, as the engine's
		// would be to a command it ran in its own session.
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	}
	err = c.Run()
	return out.String(), err
}

// TestEscape runs each attack first without the sandbox (the positive
// control: it must work, or the refusal proves nothing), then under
// workspace-write with no network, where it must fail with its exact
// error and leave no effect: one-shot, then pooled (on a warm helper).
func TestEscape(t *testing.T) {
	if h := sandbox.Probe(); h.LandlockABI < 1 || !h.UserNS {
		t.Skipf("this host cannot sandbox: %+v", h)
	}
	bin := attackBinary(t)
	cases := escapes()
	if len(cases) < 30 {
		t.Fatalf("%d attacks: the suite has at least 30", len(cases))
	}
	eachVia(t, func(t *testing.T, v *via) { escapeAll(t, v, bin, cases) })
}

func escapeAll(t *testing.T, v *via, bin string, cases []escape) {
	for _, e := range cases {
		t.Run(e.name, func(t *testing.T) {
			worked := e.worked
			if worked == nil {
				worked = func(_ *world, out string) bool { return strings.HasPrefix(out, "ok") }
			}
			if e.root && os.Geteuid() != 0 {
				t.Log("positive control skipped: the attack needs root on the host even without the sandbox")
			} else {
				w := newWorld(t, bin)
				out, err := w.run(t, v, sandbox.Policy{Mode: sandbox.Off}, e.argv(w))
				if !worked(w, out) {
					t.Fatalf("positive control: the attack did not work without the sandbox (err %v):\n%s", err, out)
				}
			}
			w := newWorld(t, bin)
			out, err := w.run(t, v, w.policy(), e.argv(w))
			if worked(w, out) {
				t.Fatalf("the attack worked in the sandbox (err %v):\n%s", err, out)
			}
			if !strings.Contains(out, e.refused) || e.refused == "" {
				t.Fatalf("refused otherwise than expected: want %q in:\n%s", e.refused, out)
			}
			var exit interface{ ExitCode() int }
			if err != nil && !errAs(err, &exit) {
				t.Fatalf("the sandbox failed, not the attack: %v\n%s", err, out)
			}
		})
	}
}
