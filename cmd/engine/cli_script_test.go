package main

import (
	"errors"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestCLIScripts runs the scripts of testdata/script: the engine binary
// as a user types it, in a directory of its own, with real engines (an
// embedded one on --data, or engine serve in the background on a free
// loopback port, $NATSPORT; the shipped deploy/access files are under
// $ACCESS).
func TestCLIScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			port, err := freeLoopbackPort()
			if err != nil {
				return err
			}
			env.Setenv("NATSPORT", fmt.Sprint(port))
			if port, err = freeLoopbackPort(); err != nil {
				return err
			}
			env.Setenv("MODELPORT", fmt.Sprint(port)) // engine demo-model's, for engine agent
			if port, err = freeLoopbackPort(); err != nil {
				return err
			}
			env.Setenv("HTTPPORT", fmt.Sprint(port))                             // serve --http's
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(env.WorkDir, ".config")) // no user file but the script's
			env.Setenv("USER", "tester")
			access, err := filepath.Abs(filepath.Join("..", "..", "deploy", "access"))
			if err != nil {
				return err
			}
			env.Setenv("ACCESS", access) // the shipped roles' files
			for _, k := range []string{"STEPGATE_NATS_USER", "STEPGATE_NATS_PASSWORD", "STEPGATE_NATS_CREDS"} {
				env.Setenv(k, "")
			}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exechint": execHint,
			"exits":    exits,
			"grab":     grab,
			"dialable": dialable,
			"until":    untilMatch,
		},
	})
}

// execHint is the script command `exechint REGEXP`: it finds in the last
// command's stdout the command REGEXP's first group captures, and runs it
// as a user who pastes it would, with sh -c (its stdout and stderr are then
// the script's to check).
func execHint(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: exechint REGEXP")
	}
	re, err := regexp.Compile(args[0])
	if err != nil {
		ts.Fatalf("exechint: %v", err)
	}
	m := re.FindStringSubmatch(ts.ReadFile("stdout"))
	if len(m) < 2 {
		ts.Fatalf("exechint: no match of %s in stdout", args[0])
	}
	ts.Logf("exechint: %s", m[1])
	err = ts.Exec("sh", "-c", m[1])
	if neg && err == nil {
		ts.Fatalf("unexpected success of %s", m[1])
	}
	if !neg {
		ts.Check(err)
	}
}

// exits is the script command `exits N PROG [ARGS...]`: it runs PROG as
// exec does (its stdout and stderr are then the script's to check) and
// fails unless PROG's exit status is N: the exit codes a caller branches on
// (2 a usage error, 1 a failure, 77 a permission the server refused).
func exits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits N PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: %v", err)
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exits: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("exit status %d, want %d", got, want)
	}
}

// grab is the script command `grab NAME REGEXP`: it sets the variable
// NAME to what REGEXP's first group captures in the last command's stdout
// (a run's id, a ticket's).
func grab(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: grab NAME REGEXP")
	}
	re, err := regexp.Compile(args[1])
	if err != nil {
		ts.Fatalf("grab: %v", err)
	}
	m := re.FindStringSubmatch(ts.ReadFile("stdout"))
	if len(m) < 2 {
		ts.Fatalf("grab: no match of %s in stdout", args[1])
	}
	ts.Setenv(args[0], m[1])
}

// dialable is the script command `dialable HOST:PORT`: it waits until a
// server started in the background accepts connections there (a command
// that does not retry its first connection needs it up). It gives up
// after a minute, only so that a server that never came up fails the
// script rather than hanging it.
func dialable(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: dialable HOST:PORT")
	}
	deadline := time.Now().Add(time.Minute)
	for {
		c, err := net.Dial("tcp", args[0])
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("dialable: nothing accepts on %s: %v", args[0], err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// untilMatch is the script command `until REGEXP PROG [ARGS...]`: it runs
// PROG as exec does until its stdout matches REGEXP (what a command in
// the background makes appear: a ticket its run is waiting on). It gives
// up after a minute, only so that what never appears fails the script
// rather than hanging it.
func untilMatch(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: until REGEXP PROG [ARGS...]")
	}
	re, err := regexp.Compile(args[0])
	if err != nil {
		ts.Fatalf("until: %v", err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		err := ts.Exec(args[1], args[2:]...)
		if err == nil && re.MatchString(ts.ReadFile("stdout")) {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("until: no match of %s in the stdout of %s after a minute (last error: %v)", args[0], args[1], err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// freeLoopbackPort is a loopback TCP port free a moment ago.
func freeLoopbackPort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
