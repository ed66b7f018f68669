package commands_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/step/steptest"
)

// Output over the run's limits reaches the model as a preview naming a file
// that holds all of it; the settle commit records the file.
func TestLargeOutputSpillsToAFile(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	dir := t.TempDir()
	h := startHostCfg(t, s, registry(t, &cnt), commands.Config{Host: "h1", ToolOutputDir: dir,
		Limits: events.OutputLimits{MaxLines: 6, MaxBytes: 4096}})
	ctx := ctxT(t)
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("line\n", 20) + "last"
	out, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: []commands.CallRequest{call("a", "count_fx", text{long})}})
	if err != nil {
		t.Fatal(err)
	}
	run, err := h.Show(ctx, commands.ShowRequest{Run: info.Run})
	if err != nil {
		t.Fatal(err)
	}
	res := run.Steps[0].Calls[0].Result
	if len(res.Files) != 1 {
		t.Fatalf("result files %v, want one", res.Files)
	}
	path := res.Files[0]
	want := "line\n\n" + executor.Marker(path) + "\n\nlast"
	if got := out.Results[0].Content; got != want {
		t.Errorf("the model read %q, want %q", got, want)
	}
	whole, err := os.ReadFile(path)
	if err != nil || string(whole) != long {
		t.Errorf("the file holds %q, %v; want the whole output", whole, err)
	}
	commits, err := h.Log.ReadRun(ctx, info.Run, 0)
	if err != nil {
		t.Fatal(err)
	}
	var stored *events.OutputFileStored
	for _, e := range commits[len(commits)-1].Commit.Events {
		if f, ok := e.(events.OutputFileStored); ok {
			stored = &f
		}
	}
	if stored == nil || stored.Path != path || stored.Bytes != int64(len(long)) || len(stored.SHA256) != 64 {
		t.Errorf("settle commit records %+v, want the file, its size and digest", stored)
	}
}

// The sweep deletes only output files past their retention and records
// them; a host started afterwards has an output-file projection that matches
// the directory.
func TestSweepDeletesOnlyExpiredOutputs(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	reg := registry(t, &cnt)
	dir := t.TempDir()
	clock := &fakeClock{now: time.Now()}
	cfg := commands.Config{Host: "h1", ToolOutputDir: dir, Clock: clock.Now, Limits: events.OutputLimits{MaxLines: 6, MaxBytes: 4096}}
	h := startHostCfg(t, s, reg, cfg)
	ctx := ctxT(t)
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("line\n", 20)
	if _, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: []commands.CallRequest{call("a", "count_fx", text{long})}}); err != nil {
		t.Fatal(err)
	}
	old := h.Proj.Outputs()
	if len(old) != 1 {
		t.Fatalf("outputs %v, want one", old)
	}
	// A file the log does not know, last written 8 days ago, and one from now.
	stray := filepath.Join(dir, "tool_STRAY")
	if err := os.WriteFile(stray, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(stray, clock.Now().Add(-8*24*time.Hour), clock.Now().Add(-8*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(dir, "tool_FRESH")
	if err := os.WriteFile(fresh, []byte("y"), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := h.SweepOutputs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{stray}, res.Deleted); diff != "" {
		t.Errorf("deleted before the retention passed (-want +got):\n%s", diff)
	}
	clock.advance(8 * 24 * time.Hour) // the spilled file's 7 days pass
	if err := os.Chtimes(fresh, clock.Now(), clock.Now()); err != nil {
		t.Fatal(err)
	}
	res, err = h.SweepOutputs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var spilled string
	for p := range old {
		spilled = p
	}
	if diff := cmp.Diff([]string{spilled}, res.Deleted); diff != "" {
		t.Errorf("deleted after the retention (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a fresh file was deleted: %v", err)
	}
	h2 := startHostCfg(t, s, reg, commands.Config{Host: "h2", ToolOutputDir: dir, Clock: clock.Now})
	caughtUp(t, h, h2)
	if got := h2.Proj.Outputs(); len(got) != 0 {
		t.Errorf("a host started afterwards keeps %v, want nothing (the directory holds no spilled output)", got)
	}
}

// A step whose bounded results would still exceed one message spills more of
// them instead of failing.
func TestLargeStepStillFitsOneCommit(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	h := startHostCfg(t, s, registry(t, &cnt), commands.Config{Host: "h1", ToolOutputDir: t.TempDir(),
		Limits: events.OutputLimits{MaxLines: 100, MaxBytes: 4 << 20}}) // each result may be 4 MiB
	ctx := ctxT(t)
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var calls []commands.CallRequest
	for i := range 3 {
		calls = append(calls, commands.CallRequest{ID: fmt.Sprint("c", i), Tool: "repeat", Args: []byte(`{"text":"0123456789abcdef","times":200000}`)})
	}
	out, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: calls})
	if err != nil {
		t.Fatalf("a step of three 3.2 MB results: %v", err)
	}
	spilled := 0
	for _, r := range out.Results {
		if r.IsError {
			t.Errorf("%s: %s", r.CallID, r.Content)
		}
		if strings.Contains(r.Content, "output truncated; full content saved to") {
			spilled++
		}
	}
	if spilled == 0 {
		t.Error("nothing was spilled, yet the step fit one 8 MiB message")
	}
}

// A step whose arguments are large enough that its commit spills a result
// that the output boundary let through answers with the result as
// committed, the same as a later read of the step.
func TestOutcomeIsTheCommittedResult(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	h := startHostCfg(t, s, registry(t, &cnt), commands.Config{Host: "h1", ToolOutputDir: t.TempDir()})
	ctx := ctxT(t)
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("0123456789abcdef", 6_500_000/16) // 6.5 MB of arguments
	out, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1,
		Calls: []commands.CallRequest{{ID: "c", Tool: "repeat", Args: []byte(`{"text":"` + text + `","times":1}`)}}})
	if err != nil {
		t.Fatal(err)
	}
	again, err := h.AwaitStep(ctx, commands.AwaitRequest{Run: info.Run, Step: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := out.Results[0].Content, again.Results[0].Content; got != want {
		t.Errorf("SubmitStep answered %d bytes, the committed step holds %d", len(got), len(want))
	}
}
