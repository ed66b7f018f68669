package builtin_test

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stepgate/stepgate/executor/builtin"
)

// A FIFO in the location is refused, not opened: opening one blocks until
// a writer comes, and nothing would ever come. read, edit and read_file all
// answer at once.
func TestFIFOIsRefusedNotWaitedOn(t *testing.T) {
	loc := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(loc, "pipe"), 0o600); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	read, err := builtin.Read()
	if err != nil {
		t.Fatal(err)
	}
	edit, err := builtin.Edit()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		p, err := prepare(t, read, loc, builtin.ReadInput{Path: "pipe"})
		if err != nil {
			t.Errorf("read: Prepare = %v", err)
			return
		}
		if res := p.Run(context.Background()); !res.IsError || res.Text() != "pipe is not a regular file" {
			t.Errorf("read of a FIFO = %+v, want the error %q", res, "pipe is not a regular file")
		}
		_, err = prepare(t, edit, loc, builtin.EditInput{Path: "pipe", OldString: "a", NewString: "b"})
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("edit of a FIFO: Prepare = %v, want it refused as not a regular file", err)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a tool blocked opening a FIFO")
	}
}
