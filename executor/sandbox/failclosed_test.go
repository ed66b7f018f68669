//go:build linux

package sandbox_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepgate/stepgate/executor/sandbox"
)

// TestFailClosed: a policy the host cannot enforce is refused with
// sandbox_unavailable naming what is missing, and the command does not
// run (its marker file never appears) — whether Command sees it (Landlock
// unavailable) or the helper meets it mid-setup (a mount, Landlock or
// seccomp refused). The control: without the switch the marker appears.
func TestFailClosed(t *testing.T) {
	eachVia(t, func(t *testing.T, v *via) {
		if h := sandbox.Probe(); h.LandlockABI < 1 || !h.UserNS {
			t.Skipf("this host cannot sandbox: %+v", h)
		}
		loc := t.TempDir()
		p := sandbox.Policy{Mode: sandbox.WorkspaceWrite, Location: loc}
		marker := filepath.Join(loc, "ran")
		argv := []string{"bash", "--norc", "--noprofile", "-c", "echo ran > " + marker}

		c, err := v.command(p, argv, loc, os.Environ())
		must(t, err)
		if out, err := c.CombinedOutput(); err != nil || !fileHas(marker, "ran") {
			t.Fatalf("control: the command did not run in the sandbox: %v\n%s", err, out)
		}
		must(t, os.Remove(marker))

		t.Run("landlock-unavailable", func(t *testing.T) {
			for _, mode := range []sandbox.Mode{sandbox.WorkspaceWrite, sandbox.ReadOnly} {
				for _, net := range []sandbox.Network{sandbox.NetOff, sandbox.NetHost} {
					q := p
					q.Mode, q.Network = mode, net
					c, err := v.command(q, argv, loc, append(os.Environ(), sandbox.EnvTestNoLandlock+"=1"))
					var se *sandbox.Error
					if !errors.As(err, &se) || se.Code != sandbox.CodeUnavailable || !errors.Is(err, sandbox.ErrUnavailable) {
						t.Fatalf("%s/%s: want sandbox_unavailable, got %v (cmd %v)", mode, net, err, c)
					}
					if !strings.HasPrefix(err.Error(), "sandbox_unavailable: ") || !strings.Contains(err.Error(), "Landlock is not available") {
						t.Fatalf("the refusal does not name what is missing: %v", err)
					}
				}
			}
			if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the command ran: %v", err)
			}
		})
		for _, fault := range []struct{ stage, says string }{
			{"mount", "mount: refused (test fault)"},
			{"landlock", "landlock: landlock_restrict_self: refused (test fault)"},
			{"seccomp", "seccomp: refused (test fault)"},
		} {
			t.Run("helper-fails-at-"+fault.stage, func(t *testing.T) {
				c, err := v.command(p, argv, loc, append(os.Environ(), sandbox.EnvTestFault+"="+fault.stage))
				must(t, err)
				out, err := c.CombinedOutput()
				var se *sandbox.Error
				if !errors.As(err, &se) || se.Code != sandbox.CodeUnavailable {
					t.Fatalf("want sandbox_unavailable, got %v\n%s", err, out)
				}
				if !strings.Contains(err.Error(), fault.says) {
					t.Fatalf("the refusal does not say what failed (%q): %v", fault.says, err)
				}
				if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("the command ran: %v", err)
				}
			})
		}
	})
}

// TestPolicyInvalid: a policy the helper could not follow is refused
// before anything starts.
func TestPolicyInvalid(t *testing.T) {
	pl := sandbox.NewPool()
	defer pl.Close()
	for _, p := range []sandbox.Policy{
		{Mode: "jail", Location: "/tmp"},
		{Mode: sandbox.WorkspaceWrite, Location: "rel"},
		{Mode: sandbox.WorkspaceWrite, Location: "/tmp", Writable: []string{"x"}},
		{Mode: sandbox.WorkspaceWrite, Location: "/tmp", Network: sandbox.NetProxy},
		{Mode: sandbox.WorkspaceWrite, Location: "/tmp", Network: "wifi"},
	} {
		_, err := sandbox.Command(p, []string{"true"}, "/tmp", nil)
		_, perr := pl.Command(p, []string{"true"}, "/tmp", nil)
		var se, pe *sandbox.Error
		if !errors.As(err, &se) || se.Code != sandbox.CodeInvalid || !errors.As(perr, &pe) || pe.Code != sandbox.CodeInvalid {
			t.Errorf("%+v: want sandbox_invalid, got %v (pooled: %v)", p, err, perr)
		}
	}
}
