package commands

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/projection"
	"github.com/stepgate/stepgate/step"
	"github.com/stepgate/stepgate/step/steptest"
)

// Results whose size is media, which no preview shortens, still fit one
// commit: fit moves their media parts to files, named in their place.
func TestFitSpillsMediaLast(t *testing.T) {
	s := steptest.Start(t, "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	log, err := step.Open(ctx, s.JS, step.StreamConfig{})
	if err != nil {
		t.Fatal(err)
	}
	proj, err := projection.Open(filepath.Join(t.TempDir(), "p.db"), projection.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer proj.Close()
	reg, err := executor.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(log, proj, reg, Config{Host: "h1", ToolOutputDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	image := []byte(strings.Repeat("\x89PNG", 500)) // 2 KB, 2.7 KB in base64
	c := e.newCommit(e.cfg.IDs.New(time.Now()), 1, events.KindSettle)
	for i := range 4000 {
		c.Events = append(c.Events, events.ToolResultRecorded{CallID: fmt.Sprint("c", i),
			Parts: []events.Part{{Type: executor.PartText, Text: "a picture"}, {Type: executor.PartMedia, MIME: "image/png", Data: image}}})
	}
	c.Events = append(c.Events, events.StepFinalized{Calls: 4000})
	if !e.fit(&c, runAt{}) {
		t.Fatal("fit changed nothing, yet 11 MB of media do not fit one message")
	}
	size, err := encodedSize(&c)
	if err != nil || size > log.MaxMsgSize() {
		t.Fatalf("fitted commit: %d bytes (%v), over %d", size, err, log.MaxMsgSize())
	}
	spilled := 0
	for _, ev := range c.Events {
		r, ok := ev.(events.ToolResultRecorded)
		if !ok || len(r.Files) == 0 {
			continue
		}
		spilled++
		file := r.Files[len(r.Files)-1]
		if !strings.Contains(r.Parts[len(r.Parts)-1].Text, executor.MediaMarker("image/png", len(image), file)) {
			t.Fatalf("%s: %+v does not name its media's file", r.CallID, r.Parts)
		}
		if b, err := os.ReadFile(file); err != nil || string(b) != string(image) {
			t.Fatalf("%s: the file holds %d bytes (%v), want the media", r.CallID, len(b), err)
		}
	}
	t.Logf("%d of 4000 results' media moved to files; the commit is %d bytes", spilled, size)
}
