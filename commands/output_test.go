package commands_test

import (
	"os"
	"strings"
	"testing"

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
