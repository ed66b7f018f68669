package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/cmd/engine/service/servicetest"
	"github.com/stepgate/stepgate/commands"
)

// fleetOfTwo serves hosts A and B on one server, A holding root/a/* and B
// root/b/* (one filesystem here: the declarations keep them apart; the
// integration tests give each host a filesystem of its own).
func fleetOfTwo(t testing.TB) (e *servicetest.Engine, b *servicetest.Member, root string) {
	t.Helper()
	root = t.TempDir()
	for _, d := range []string{"a/w", "b/w"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e, err := servicetest.StartWith(commands.Config{Host: "A", Locations: []string{filepath.Join(root, "a", "*")}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	if b, err = e.AddHost(commands.Config{Host: "B", Locations: []string{filepath.Join(root, "b", "*")}}); err != nil {
		t.Fatal(err)
	}
	return e, b, root
}

func writeCall(n int) client.CallRequest {
	args, _ := json.Marshal(map[string]string{"path": fmt.Sprintf("f%d.txt", n), "content": fmt.Sprint(n)})
	return client.CallRequest{ID: fmt.Sprintf("c%d", n), Tool: "write", Args: args}
}

// Runs in a location only B holds start, and take every step, on B,
// whichever host the queue group hands the request to: every write lands
// in B's directory and every step is committed by B; a run in A's the
// same on A. A location no host declares cannot start.
func TestStepsRunWhereTheLocationIsHeld(t *testing.T) {
	e, mb, root := fleetOfTwo(t)
	hb := mb.Host
	c, err := client.Dial(e.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, side := range []struct{ dir, holder string }{{"b", "B"}, {"a", "A"}} {
		loc := filepath.Join(root, side.dir, "w")
		info, err := c.StartRun(ctx, client.StartRunRequest{Location: loc})
		if err != nil {
			t.Fatalf("start a run in %s: %v", loc, err)
		}
		const steps = 12
		for n := 1; n <= steps; n++ {
			out, err := c.SubmitStep(ctx, client.SubmitStepRequest{Run: info.Run, Step: n, Calls: []client.CallRequest{writeCall(n)}})
			if err != nil {
				t.Fatalf("step %d in %s: %v", n, loc, err)
			}
			if r := out.Results[0]; r.IsError {
				t.Fatalf("step %d in %s: %s", n, loc, r.Content)
			}
		}
		for n := 1; n <= steps; n++ {
			if _, err := os.Stat(filepath.Join(loc, fmt.Sprintf("f%d.txt", n))); err != nil {
				t.Errorf("write of step %d: %v", n, err)
			}
		}
		if err := hb.Proj.Sync(ctx, hb.Log); err != nil {
			t.Fatal(err)
		}
		r, ok, err := hb.Proj.Run(info.Run)
		if err != nil || !ok {
			t.Fatalf("run %s: %v (found %t)", info.Run, err, ok)
		}
		for n := 1; n <= steps; n++ {
			if got := r.Step(n).Host; got != side.holder {
				t.Errorf("run in %s: step %d committed by %s, want its holder %s", loc, n, got, side.holder)
			}
		}
	}
	nowhere := filepath.Join(root, "c")
	if err := os.MkdirAll(nowhere, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = c.StartRun(ctx, client.StartRunRequest{Location: nowhere})
	if client.Code(err) != client.CodeInvalidInput {
		t.Errorf("start a run where no host holds: %v (code %q), want invalid_input", err, client.Code(err))
	}
}

// With the holder of a run's location gone, a step is executed nowhere:
// the client is answered no_executor, naming the location, and the file
// is not written; a directory moved away and made again at the path is
// not the run's location, and is not written either.
func TestNoExecutorWhenTheHolderIsGone(t *testing.T) {
	e, mb, root := fleetOfTwo(t)
	c, err := client.Dial(e.URL, client.WithTimeout(3*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	loc := filepath.Join(root, "b", "w")
	info, err := c.StartRun(ctx, client.StartRunRequest{Location: loc})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SubmitStep(ctx, client.SubmitStepRequest{Run: info.Run, Step: 1, Calls: []client.CallRequest{writeCall(1)}}); err != nil {
		t.Fatal(err)
	}

	// The directory is replaced under B: B no longer holds the run's place.
	if err := os.Rename(loc, loc+".moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(loc, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = c.SubmitStep(ctx, client.SubmitStepRequest{Run: info.Run, Step: 2, Calls: []client.CallRequest{writeCall(2)}})
	if !errors.Is(err, client.ErrNoExecutor) && !strings.Contains(err.Error(), "no_executor") {
		t.Fatalf("step 2 in a directory made again: %v, want no_executor", err)
	}
	if !strings.Contains(err.Error(), loc) || !strings.Contains(err.Error(), "another directory") {
		t.Errorf("no_executor %q: want it to name the location and why", err)
	}
	if _, err := os.Stat(filepath.Join(loc, "f2.txt")); err == nil {
		t.Error("step 2 wrote into the directory made again")
	}
	if err := os.Remove(loc); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(loc+".moved", loc); err != nil {
		t.Fatal(err)
	}

	// B stops: no host holds the location any more.
	mb.Stop()
	_, err = c.SubmitStep(ctx, client.SubmitStepRequest{Run: info.Run, Step: 2, Calls: []client.CallRequest{writeCall(2)}})
	if err == nil || !strings.Contains(err.Error(), "no live host holds it") {
		t.Fatalf("step 2 with its holder gone: %v, want no_executor", err)
	}
	if _, err := os.Stat(filepath.Join(loc, "f2.txt")); err == nil {
		t.Error("step 2 ran with its holder gone")
	}
}
