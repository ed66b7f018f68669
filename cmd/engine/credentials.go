package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/nats-io/nats.go"
)

// The environment variables a client or host reads its NATS credentials
// from when no flag gives them: a password there, or in a file
// (--password-file), is in no process's argv, so neither ps nor an MCP
// client's configuration shows it.
const (
	envNATSUser     = "STEPGATE_NATS_USER"
	envNATSPassword = "STEPGATE_NATS_PASSWORD"
	envNATSCreds    = "STEPGATE_NATS_CREDS"
)

// maxPasswordFile bounds what --password-file reads: a password, not a
// file of anything.
const maxPasswordFile = 4 << 10

// errPasswordFlag is the warning --password earns: it still works, for
// the scripts and MCP configurations that use it, but it shows.
const warnPasswordFlag = "engine: warning: --password is visible to every user of this machine (ps, /proc/PID/cmdline) and in the files that hold the command: use --password-file FILE or " + envNATSPassword + "\n"

// natsCreds are the credentials a process identifies itself with to NATS,
// from the flags, else from the environment.
type natsCreds struct {
	user, password, creds string
}

// resolveCreds settles the credentials: --user, else STEPGATE_NATS_USER;
// --password-file (read now), else --password (deprecated: it warns on
// warn), else STEPGATE_NATS_PASSWORD; --creds, else STEPGATE_NATS_CREDS.
// A password without a user is an error, not a silent anonymous login.
func (f *connFlags) resolveCreds(getenv func(string) string, warn io.Writer) (natsCreds, error) {
	c := natsCreds{user: f.user, creds: f.creds}
	if c.user == "" {
		c.user = getenv(envNATSUser)
	}
	if c.creds == "" {
		c.creds = getenv(envNATSCreds)
	}
	switch {
	case f.passwordFile != "" && f.password != "":
		return natsCreds{}, usageError{"--password and --password-file do not go together (use --password-file)"}
	case f.passwordFile != "":
		pw, err := readPasswordFile(f.passwordFile)
		if err != nil {
			return natsCreds{}, err
		}
		c.password = pw
	case f.password != "":
		fmt.Fprint(warn, warnPasswordFlag)
		c.password = f.password
	default:
		c.password = getenv(envNATSPassword)
	}
	if c.user == "" && (f.passwordFile != "" || f.password != "") {
		return natsCreds{}, usageError{"a NATS password needs a user: give --user NAME (or " + envNATSUser + ")"}
	}
	return c, nil
}

// options returns the client options of c.
func (c natsCreds) options() []nats.Option {
	var opts []nats.Option
	if c.user != "" {
		opts = append(opts, nats.UserInfo(c.user, c.password))
	}
	if c.creds != "" {
		opts = append(opts, nats.UserCredentials(c.creds))
	}
	return opts
}

// readPasswordFile reads a password from path: a regular file (a FIFO, a
// device or a directory is refused at once, without blocking on it) of at
// most maxPasswordFile bytes, its trailing newline (\n or \r\n) trimmed. An
// empty password is an error, never an anonymous login. Errors name the
// file, never its content.
func readPasswordFile(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return "", fmt.Errorf("--password-file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("--password-file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("--password-file %s: not a regular file (%s)", path, fi.Mode().Type())
	}
	if fi.Size() > maxPasswordFile {
		return "", fmt.Errorf("--password-file %s: %d bytes, more than a password (at most %d)", path, fi.Size(), maxPasswordFile)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxPasswordFile+1))
	if err != nil {
		return "", fmt.Errorf("--password-file %s: %w", path, err)
	}
	if len(b) > maxPasswordFile {
		return "", fmt.Errorf("--password-file %s: more than a password (at most %d bytes)", path, maxPasswordFile)
	}
	pw := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if pw == "" {
		return "", fmt.Errorf("--password-file %s: %w", path, errEmptyPassword)
	}
	return pw, nil
}

// errEmptyPassword is a password file that holds no password.
var errEmptyPassword = errors.New("empty: no password")
