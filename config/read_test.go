package config_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/gate"
)

// hostileFile makes path one of the hostile kinds of project file the
// tests refuse: a 600 MB file (sparse: no disk and no time to write), a
// named pipe nobody ever opens for writing, a symbolic link to /dev/zero, a
// directory.
func hostileFile(t *testing.T, kind, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	var err error
	switch kind {
	case "600 MB":
		var f *os.File
		if f, err = os.Create(path); err == nil {
			err = errors.Join(f.Truncate(600<<20), f.Close())
		}
	case "a FIFO":
		err = syscall.Mkfifo(path, 0o600)
	case "a link to /dev/zero":
		err = os.Symlink("/dev/zero", path)
	case "a directory":
		err = os.Mkdir(path, 0o700)
	default:
		t.Fatalf("no hostile file %q", kind)
	}
	if err != nil {
		t.Fatalf("make %s at %s: %v", kind, path, err)
	}
}

// returns runs f and fails the test if f has not returned after a generous
// while: a guard against a read that blocks for ever, not a measure of how
// long the read takes.
func returns(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("%s did not return: it is blocked", what)
	}
}

// A hostile project file is refused at once, before anything of it is
// read: a 600 MB file by the size its descriptor reports (the test's heap
// grows by less than the cap: nothing of it was read), a named pipe by its
// type (its other end is never opened, so an open that waited would never
// return), a link to /dev/zero because the project file is never read
// through a link, a directory by its type. Each is an *Error naming the
// file, an ErrInvalid, and the agent in that location is denied
// everything.
func TestHostileProjectFilesAreRefused(t *testing.T) {
	tests := []struct {
		kind, why string
	}{
		{"600 MB", "629145600 bytes, more than the 262144 bytes a configuration file may hold"},
		{"a FIFO", "a named pipe, not a regular file"},
		{"a link to /dev/zero", "config.yaml is a symbolic link"},
		{"a directory", "a directory, not a regular file"},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			loc := t.TempDir()
			hostileFile(t, tt.kind, config.ProjectFile(loc))
			var err error
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			returns(t, "Load", func() { _, err = config.Load(config.ProjectFile(loc), gate.SourceProject) })
			runtime.ReadMemStats(&after)
			var ce *config.Error
			if !errors.As(err, &ce) || ce.File != config.ProjectFile(loc) || ce.Key != "(file)" || !strings.Contains(ce.Msg, tt.why) || !errors.Is(err, config.ErrInvalid) {
				t.Fatalf("Load = %v, want an *Error on %s saying %q", err, config.ProjectFile(loc), tt.why)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > config.MaxFileBytes {
				t.Errorf("refusing the file allocated %d bytes, more than the %d a file may hold: it was read", grew, config.MaxFileBytes)
			}
			var eff config.Effective
			returns(t, "Effective", func() { eff, err = config.Loader{}.Effective("build", loc) })
			if !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), tt.why) {
				t.Errorf("Effective = %v, want the refusal", err)
			}
			for _, action := range []string{"read", "bash", "edit"} {
				if v := gate.Evaluate(action, "x", eff.Rules); v.Effect != gate.Deny {
					t.Errorf("%s in a location whose project file is %s: %s, want deny", action, tt.kind, v.Effect)
				}
			}
		})
	}
}

// The user's file, a candidate policy (config.ReadFile) and the secrets
// file are read the same way; a link there is followed, to a regular file
// only: /dev/zero is refused as the character device it is, a named pipe
// as one, without waiting for a writer.
func TestHostileUserFilesAreRefused(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct{ kind, why string }{
		{"a FIFO", "a named pipe, not a regular file"},
		{"a link to /dev/zero", "a character device, not a regular file"},
		{"600 MB", "629145600 bytes, more than the 262144 bytes"},
		{"a directory", "a directory, not a regular file"},
	} {
		t.Run(tt.kind, func(t *testing.T) {
			dir := t.TempDir()
			user := filepath.Join(dir, "config.yaml")
			hostileFile(t, tt.kind, user)
			var err error
			returns(t, "Load", func() { _, err = config.Load(user, gate.SourceUser) })
			if !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), tt.why) {
				t.Errorf("the user's file: Load = %v, want it refused: %s", err, tt.why)
			}
			returns(t, "ReadFile", func() { _, err = config.ReadFile(user) })
			if !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), tt.why) {
				t.Errorf("ReadFile = %v, want it refused: %s", err, tt.why)
			}
			secrets := filepath.Join(dir, "secrets.yaml")
			hostileFile(t, tt.kind, secrets)
			returns(t, "Resolve", func() { _, err = (&config.Secrets{File: secrets}).Resolve(ctx, "secret://SG_HOSTILE_UNSET") })
			if !errors.Is(err, config.ErrSecret) || !strings.Contains(err.Error(), tt.why) {
				t.Errorf("the secrets file: Resolve = %v, want it refused: %s", err, tt.why)
			}
		})
	}
}

// A file no one may read is refused with the system's reason. As root,
// file modes do not stop a read, so there the case is run by
// TestHostileConfigVerbs in the integration tests, as an unprivileged user.
func TestUnreadableProjectFileIsRefused(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("as root a mode of 0 does not stop the read: integration's TestHostileConfigVerbs/unreadable runs this as nobody")
	}
	loc := t.TempDir()
	if err := os.MkdirAll(filepath.Dir(config.ProjectFile(loc)), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(config.ProjectFile(loc), []byte("agents: {build: {permission: {bash: allow}}}\n"), 0); err != nil {
		t.Fatal(err)
	}
	eff, err := config.Loader{}.Effective("build", loc)
	if !errors.Is(err, config.ErrInvalid) || !errors.Is(err, os.ErrPermission) {
		t.Fatalf("Effective = %v, want permission denied", err)
	}
	if v := gate.Evaluate("bash", "ls", eff.Rules); v.Effect != gate.Deny {
		t.Errorf("bash: %s, want deny", v.Effect)
	}
}

// Text past MaxFileBytes handed to Parse is refused unparsed, and the
// largest file allowed is still read whole.
func TestParseAndLoadAtTheCap(t *testing.T) {
	body := "agents: {build: {permission: {bash: ask}}}\n"
	full := body + "#" + strings.Repeat("x", config.MaxFileBytes-len(body)-2) + "\n"
	if len(full) != config.MaxFileBytes {
		t.Fatalf("the test's file is %d bytes", len(full))
	}
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(full), 0o600); err != nil {
		t.Fatal(err)
	}
	if f, err := config.Load(path, gate.SourceUser); err != nil || len(f.Agents["build"]) != 1 {
		t.Fatalf("a file of exactly MaxFileBytes: %+v, %v", f, err)
	}
	_, err := config.Parse("big.yaml", []byte(full+"\n"), gate.SourceUser)
	if want := "big.yaml:0: (file): 262145 bytes, more than the 262144 bytes a configuration file may hold"; err == nil || err.Error() != want {
		t.Errorf("Parse of one byte more = %v, want %q", err, want)
	}
}
