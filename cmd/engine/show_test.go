package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/cmd/engine/hosting"
	"github.com/stepgate/stepgate/cmd/engine/render"
	"github.com/stepgate/stepgate/commands"
)

// show's timeline and JSON over a recorded run equal the golden files
// (run with -update to rewrite them).
func TestShowRecordedRunGolden(t *testing.T) {
	api, run, norm, _, _ := recordShowFixture(t, "")
	ctx := context.Background()
	d, err := showRun(ctx, api, run)
	if err != nil {
		t.Fatal(err)
	}
	var text, colored bytes.Buffer
	render.Timeline(&text, d, render.Palette{})
	goldenFile(t, "show_recorded.golden", []byte(norm.Replace(text.String())))
	render.Timeline(&colored, d, render.Palette{On: true})
	goldenFile(t, "show_recorded_color.golden", []byte(norm.Replace(colored.String())))
	// The catalogue is every built-in tool's schema: the tools' own
	// business, not the timeline's (its fingerprint stays).
	d.Run.Catalog.Tools = nil
	// The location's inode numbers are this machine's (its id is the
	// run's: the run marked it).
	if p := d.Run.Snapshot.Place; p != nil {
		p.DirIno, p.MarkIno = 1, 2
	}
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	goldenFile(t, "show_recorded.json.golden", []byte(norm.Replace(string(b))+"\n"))

	// A reader of the run alone (as before the timeline) still decodes it.
	want, err := api.Show(ctx, commands.ShowRequest{Run: run})
	if err != nil {
		t.Fatal(err)
	}
	want.Catalog.Tools = nil
	if p := want.Snapshot.Place; p != nil {
		p.DirIno, p.MarkIno = 1, 2
	}
	compact, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var got sgclient.Run
	if err := json.Unmarshal(compact, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, &got); diff != "" {
		t.Errorf("show --json read as a run differs from the run (-want +got):\n%s", diff)
	}
}

// --color auto colours a terminal only: a file or a pipe gets plain text;
// always and never are what they say; anything else is a usage error,
// refused before an engine is opened.
func TestShowColorFlag(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for _, c := range []struct {
		mode string
		out  io.Writer
		on   bool
	}{{"auto", f, false}, {"auto", w, false}, {"auto", &bytes.Buffer{}, false}, {"always", f, true}, {"never", f, false}} {
		p, err := colorFor(c.mode, c.out)
		if err != nil || p.On != c.on {
			t.Errorf("--color %s on %T: colour %v, %v; want %v", c.mode, c.out, p.On, err, c.on)
		}
	}
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		defer tty.Close()
		if p, _ := colorFor("auto", tty); !p.On {
			t.Error("--color auto on a terminal: no colour")
		}
	}
	var stderr bytes.Buffer
	err = runShow(context.Background(), []string{"--color", "rainbow", "--data", t.TempDir(), "01M8P570G07KPDFAMNYVAD1MSJ"}, io.Discard, &stderr)
	var u usageError
	if !errors.As(err, &u) || !strings.Contains(err.Error(), `--color "rainbow": want auto, always or never`) {
		t.Errorf("--color rainbow: %v, want a usage error naming the choices", err)
	}
}

// `engine show RUN --data DIR` on the recorded log prints the golden
// timeline, and --json the same timeline as the document the golden JSON
// holds: the verb reads the run, the project's grants and the run's commits
// itself.
func TestShowVerbOverData(t *testing.T) {
	data := t.TempDir()
	api, run, norm, stop, _ := recordShowFixture(t, filepath.Join(data, "nats"))
	want, err := showRun(context.Background(), api, run)
	if err != nil {
		t.Fatal(err)
	}
	stop()
	var stdout, stderr bytes.Buffer
	if err := runShow(context.Background(), []string{"--data", data, "--color", "never", run}, &stdout, &stderr); err != nil {
		t.Fatalf("engine show: %v\n%s", err, stderr.String())
	}
	goldenFile(t, "show_recorded.golden", []byte(norm.Replace(stdout.String())))
	stdout.Reset()
	if err := runShow(context.Background(), []string{"--data", data, "--json", run}, &stdout, &stderr); err != nil {
		t.Fatalf("engine show --json: %v\n%s", err, stderr.String())
	}
	var got render.Show
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.Timeline, got.Timeline, cmp.Transformer("args", func(m json.RawMessage) string { return string(compactJSON(t, m)) })); diff != "" {
		t.Errorf("show --json's timeline differs from the recorded one (-want +got):\n%s", diff)
	}
	if !got.Timeline.Timed || got.ID != run {
		t.Errorf("show --json: run %q, timed %v; want %s, timed", got.ID, got.Timeline.Timed, run)
	}
}

func compactJSON(t *testing.T, m json.RawMessage) []byte {
	var b bytes.Buffer
	if len(m) == 0 {
		return nil
	}
	if err := json.Compact(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// `engine show RUN --nats URL` asks the service (show and run_facts) of
// an engine serving the recorded log, and prints the same golden timeline
// as in process; an unknown run is run_not_found.
func TestShowVerbOverNATS(t *testing.T) {
	data := t.TempDir()
	_, run, norm, stop, _ := recordShowFixture(t, filepath.Join(data, "nats"))
	stop()
	ctx, url := serveData(t, data)
	var stdout, stderr bytes.Buffer
	if err := runShow(ctx, []string{"--nats", url, "--timeout", "10s", "--color", "never", run}, &stdout, &stderr); err != nil {
		t.Fatalf("engine show --nats: %v\n%s", err, stderr.String())
	}
	goldenFile(t, "show_recorded.golden", []byte(norm.Replace(stdout.String())))
	err := runShow(ctx, []string{"--nats", url, "--timeout", "10s", "01M8P570G07KPDFAMNYVAD1MS0"}, io.Discard, &stderr)
	if sgclient.Code(err) != sgclient.CodeRunNotFound {
		t.Errorf("show of an unknown run: %v, want run_not_found", err)
	}
}

// serveData serves the data directory data (an engine host and its
// service on a loopback listener) until the test ends, and returns a
// context bounded for the test and the server's URL.
func serveData(t *testing.T, data string) (context.Context, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	log := logger(io.Discard)
	e, err := startEmbedded(ctx, hosting.Options{DataDir: data, Listen: "127.0.0.1:0", Log: log})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	stopService, err := serveAPI(ctx, e.Conn, e.Host, "0.0.0-test", log)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		if err := stopService(); err != nil {
			t.Error(err)
		}
		if err := e.Close(); err != nil {
			t.Error(err)
		}
	})
	return ctx, e.Server.ClientURL()
}
