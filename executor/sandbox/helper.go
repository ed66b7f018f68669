//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// The helper's name: the engine re-executes its own binary
// (/proc/self/exe) with it as arg0 and specArg as its argument, so no
// environment variable marks the helper (nothing can leak into the
// command).
const (
	stage1Name = "stepgate-sandbox" // PID 1 of the namespaces: builds the view, starts the command, reaps
	specArg    = "--spec-fd=4"
)

// helperFailed is the helper's exit status when it failed before the
// command ran (the message is in its report and on stderr); Wait maps it
// to sandbox_unavailable.
const helperFailed = 125

// spec is what the helper is given, JSON on its spec pipe (fd 4; an
// argument could not hold a long command): not a secret (the
// environment in it is already scrubbed).
type spec struct {
	Policy      Policy   `json:"policy"`
	Argv        []string `json:"argv"`
	Dir         string   `json:"dir"`
	Env         []string `json:"env"`
	Fault       string   `json:"fault,omitempty"` // test switch, see EnvTestFault
	LandlockABI int      `json:"landlock_abi"`
	// Serve makes the helper a pooled one (see Pool): no command of its
	// own, it serves calls on its control socket (ctlFD).
	Serve bool `json:"serve,omitempty"`
}

// report is the helper's one line on fd 3: what it enforced just before
// exec, or why it failed.
type report struct {
	Enforced *Enforced `json:"enforced,omitempty"`
	Error    string    `json:"error,omitempty"`
}

// The helper's pipes: its report (written) and its spec (read).
const (
	reportFD = 3
	specFD   = 4
)

// MaybeRun runs the sandbox helper and exits when this process was
// started as one (by Command); otherwise it returns at once. Call it
// first thing in main, and in the TestMain of a test package that runs
// sandboxed commands.
func MaybeRun() {
	if len(os.Args) != 2 || os.Args[1] != specArg {
		return
	}
	if filepath.Base(os.Args[0]) == stage1Name {
		// The main goroutine stays on the main thread, which is restricted
		// and starts the command.
		runtime.LockOSThread()
		os.Exit(runStage(stage1))
	}
}

func runStage(stage func(spec) (int, error)) int {
	f := os.NewFile(specFD, "spec")
	if f == nil {
		return fail(errors.New("no spec pipe"))
	}
	var s spec
	dec := json.NewDecoder(f)
	dec.DisallowUnknownFields() // an older helper than its engine fails closed
	err := dec.Decode(&s)
	f.Close()
	if err != nil {
		return fail(fmt.Errorf("spec: %w", err))
	}
	if len(s.Argv) == 0 && !s.Serve {
		return fail(errors.New("spec: no command"))
	}
	code, err := stage(s)
	if err != nil {
		return fail(err)
	}
	return code
}

// fail reports err on the report pipe and stderr, and is helperFailed.
func fail(err error) int {
	writeReport(report{Error: err.Error()})
	fmt.Fprintln(os.Stderr, "stepgate-sandbox:", err)
	return helperFailed
}

func writeReport(r report) {
	b, _ := json.Marshal(r)
	f := os.NewFile(reportFD, "report")
	if f == nil {
		return
	}
	_, _ = f.Write(append(b, '\n'))
	f.Close()
}
