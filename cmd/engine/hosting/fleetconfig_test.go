package hosting

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/internal/syncbuf"
	"github.com/stepgate/stepgate/step"
	"github.com/stepgate/stepgate/step/steptest"
)

const pushGood = `agents:
  build:
    permission:
      bash: { "*": ask, "git status *": allow }
`

// A host follows the fleet's document as it changes; a document that cannot
// be used (written to the bucket by something other than config push) is
// refused with an error in the log, and the host keeps the last good one.
func TestFleetConfigKeepsTheLastGoodDocument(t *testing.T) {
	_, js := steptest.Listening(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var logs syncbuf.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	base := config.Loader{UserFile: filepath.Join(t.TempDir(), "none.yaml")}
	fc := newFleetConfig(base, log)
	if err := fc.start(ctx, js, step.DefaultStream, 1); err != nil {
		t.Fatal(err)
	}
	if p := fc.policy("build", t.TempDir()); p.Version != 0 {
		t.Fatalf("no document yet: version %d, want 0 (the local file)", p.Version)
	}
	b, err := step.OpenConfig(ctx, js, step.DefaultStream, 1)
	if err != nil {
		t.Fatal(err)
	}
	d, err := config.NewFleetDoc("good.yaml", []byte(pushGood), "test", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	v, _ := d.Encode()
	if _, err := b.Put(ctx, v); err != nil {
		t.Fatal(err)
	}
	waitFor(t, &logs, `fleet configuration applied" version=1`)
	if _, err := b.Put(ctx, []byte(`{"v":1,"sha256":"00","content":""}`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, &logs, `cannot be used: this host keeps the last good one" version=2 kept=1`)
	p := fc.policy("build", t.TempDir())
	if p.Version != 1 {
		t.Fatalf("after a bad document: version %d, want 1 kept", p.Version)
	}
}

// waitFor waits until the log holds want (a deadline only against a hang).
func waitFor(t *testing.T, logs *syncbuf.Buffer, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(logs.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the log never said %q:\n%s", want, logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
