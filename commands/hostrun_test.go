package commands_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/step/steptest"
)

// TestHostRunStopsEverythingWhenCancelled runs a host as a caller's actor:
// it serves once Ready, and cancelling Run's ctx stops every goroutine it
// started (follower, lease renewal and watch, sweeper), writes the final
// checkpoint, and a second host on the same state replays nothing.
func TestHostRunStopsEverythingWhenCancelled(t *testing.T) {
	before := goleak.IgnoreCurrent()
	s := steptest.Start(t, "")
	reg := registry(t, new(counter))
	dir := t.TempDir()
	h, err := commands.OpenHost(ctxT(t), s.JS, reg, commands.HostConfig{StateDir: dir, Engine: commands.Config{Host: "a"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- h.Run(ctx) }()
	select {
	case <-h.Ready():
	case err := <-ran:
		t.Fatalf("Run returned before it served: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("not ready within 30 s")
	}
	run, err := h.StartRun(ctxT(t), commands.StartRunRequest{Location: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.SubmitStep(ctxT(t), commands.SubmitStepRequest{Run: run.Run, Step: 1,
		Calls: []commands.CallRequest{call("c1", "echo", map[string]string{"text": "hi"})}}); err != nil {
		t.Fatal(err)
	}
	if err := h.Run(ctx); !errors.Is(err, commands.ErrInvalidRequest) {
		t.Errorf("a second Run: %v; want invalid_request", err)
	}
	cancel()
	select {
	case err := <-ran:
		if err != nil {
			t.Fatalf("Run after cancel: %v; want nil", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return within 30 s of its ctx being cancelled")
	}
	if err := h.Close(); err != nil {
		t.Errorf("Close after Run returned: %v", err)
	}
	h2 := startHostIn(t, s, reg, "a", dir)
	if n := h2.Proj.Replayed(); n != 0 {
		t.Errorf("the restarted host replayed %d commits; want 0 (the final checkpoint holds them)", n)
	}
	if err := h2.Close(); err != nil {
		t.Fatal(err)
	}
	s.Stop() // the server's goroutines go with it: what is left is ours
	goleak.VerifyNone(t, before)
}

// TestHostCloseTwiceAndConcurrently closes a started host from several
// goroutines at once and again after: every call returns, with one answer,
// and nothing the host started is left running.
func TestHostCloseTwiceAndConcurrently(t *testing.T) {
	before := goleak.IgnoreCurrent()
	s := steptest.Start(t, "")
	reg := registry(t, new(counter))
	h, err := commands.StartHost(ctxT(t), s.JS, reg, commands.HostConfig{StateDir: t.TempDir(), Engine: commands.Config{Host: "a"}})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { errs[i] = h.Close() })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Close %d: %v", i, err)
		}
	}
	if err := h.Close(); err != nil {
		t.Errorf("a later Close: %v", err)
	}
	select {
	case <-h.Done():
	default:
		t.Error("Done is not closed after Close")
	}
	s.Stop() // the server's goroutines go with it: what is left is ours
	goleak.VerifyNone(t, before)
}

// TestOpenedHostThatNeverRanCloses lets go of a host that was opened and
// never run: its checkpoint is closed (a new host can open the same state
// directory at once) and Run afterwards refuses.
func TestOpenedHostThatNeverRanCloses(t *testing.T) {
	s := steptest.Start(t, "")
	reg := registry(t, new(counter))
	dir := t.TempDir()
	h, err := commands.OpenHost(ctxT(t), s.JS, reg, commands.HostConfig{StateDir: dir, Engine: commands.Config{Host: "a"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if err := h.Run(ctxT(t)); !errors.Is(err, commands.ErrInvalidRequest) {
		t.Errorf("Run after Close: %v; want invalid_request", err)
	}
	startHostIn(t, s, reg, "a", dir) // the checkpoint's lock is free
}

// TestAwaitAnsweredUnavailableWhenTheHostStops waits on a step that waits
// for a human, then stops the host: the waiter is answered unavailable at
// once (ask again elsewhere), not left until its timeout, and a later
// AwaitStep on the stopped host is answered the same way.
func TestAwaitAnsweredUnavailableWhenTheHostStops(t *testing.T) {
	before := goleak.IgnoreCurrent()
	s := steptest.Start(t, "")
	reg := registry(t, new(counter))
	h, err := commands.StartHost(ctxT(t), s.JS, reg, commands.HostConfig{StateDir: t.TempDir(), Engine: commands.Config{Host: "a"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	run, err := h.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir(),
		Rules: []gate.Rule{{Action: "echo", Resource: "*", Effect: gate.Ask}}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: run.Run, Step: 1,
		Calls: []commands.CallRequest{call("c1", "echo", map[string]string{"text": "hi"})}})
	if err != nil || out.Final {
		t.Fatalf("submit: %+v, %v; want a step that waits", out, err)
	}
	waited := make(chan error, 1)
	go func() {
		_, err := h.AwaitStep(ctx, commands.AwaitRequest{Run: run.Run, Step: 1, Timeout: "1h"})
		waited <- err
	}()
	time.Sleep(50 * time.Millisecond) // let the waiter register (it is answered either way)
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-waited:
		if !errors.Is(err, commands.ErrUnavailable) {
			t.Errorf("the waiter got %v; want unavailable", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter was not answered within 10 s of the host stopping")
	}
	if _, err := h.AwaitStep(ctx, commands.AwaitRequest{Run: run.Run, Step: 1}); err == nil {
		t.Error("AwaitStep on a stopped host answered without an error")
	}
	s.Stop()
	goleak.VerifyNone(t, before)
}
