package main

import (
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// --password-file reads a regular file of at most maxPasswordFile bytes,
// trims one trailing newline (\n or \r\n) and nothing else, and refuses
// an empty file, a bigger one and anything not a regular file; a FIFO
// without a writer is refused at once rather than read (which would block).
func TestReadPasswordFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tt := range []struct{ content, want string }{
		{"s3cret\n", "s3cret"},
		{"s3cret\r\n", "s3cret"},
		{"s3cret", "s3cret"},
		{" s3 cret \n\n", " s3 cret \n"},
	} {
		if got, err := readPasswordFile(write("pw", tt.content)); err != nil || got != tt.want {
			t.Errorf("%q: %q, %v; want %q", tt.content, got, err, tt.want)
		}
	}
	if _, err := readPasswordFile(write("empty", "\n")); !errors.Is(err, errEmptyPassword) {
		t.Errorf("a file of a newline: %v, want errEmptyPassword", err)
	}
	big := strings.Repeat("x", maxPasswordFile+1)
	if _, err := readPasswordFile(write("big", big)); err == nil || strings.Contains(err.Error(), "xxx") {
		t.Errorf("a file of %d bytes: %v, want an error that quotes nothing of it", len(big), err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readPasswordFile(fifo); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a FIFO: %v, want not a regular file", err)
	}
	if _, err := readPasswordFile(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory: %v, want not a regular file", err)
	}
}

// The credentials come from the flags, else the environment; --password
// warns; a password without a user, or two passwords, is a usage error.
func TestResolveCreds(t *testing.T) {
	pw := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pw, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{envNATSUser: "env-user", envNATSPassword: "from-env", envNATSCreds: "env.creds"}
	getenv := func(k string) string { return env[k] }
	resolve := func(args ...string) (natsCreds, string, error) {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var cf connFlags
		cf.register(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		var warn strings.Builder
		c, err := cf.resolveCreds(getenv, &warn)
		return c, warn.String(), err
	}
	if c, warn, err := resolve(); err != nil || c != (natsCreds{"env-user", "from-env", "env.creds"}) || warn != "" {
		t.Errorf("from the environment: %+v %q %v", c, warn, err)
	}
	if c, warn, err := resolve("--user", "u", "--password-file", pw, "--creds", "f.creds"); err != nil || c != (natsCreds{"u", "from-file", "f.creds"}) || warn != "" {
		t.Errorf("from the flags: %+v %q %v", c, warn, err)
	}
	if c, warn, err := resolve("--user", "u", "--password", "in-argv"); err != nil || c.password != "in-argv" || !strings.Contains(warn, "visible") {
		t.Errorf("--password: %+v %q %v, want it used and warned about", c, warn, err)
	}
	var u usageError
	if _, _, err := resolve("--user", "u", "--password", "a", "--password-file", pw); !errors.As(err, &u) {
		t.Errorf("two passwords: %v, want a usage error", err)
	}
	delete(env, envNATSUser)
	if _, _, err := resolve("--password-file", pw); !errors.As(err, &u) {
		t.Errorf("a password without a user: %v, want a usage error", err)
	}
}
