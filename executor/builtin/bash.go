package builtin

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
	"mvdan.cc/sh/v3/syntax"
)

// Bash limits.
const (
	BashDefaultTimeout = 120 * time.Second
	BashMaxTimeout     = 600 * time.Second
	// BashCaptureLimit is bash's memory guard on output; it is not the
	// output store's truncation for the model, and says so in the output.
	BashCaptureLimit = 1 << 20
)

// BashInput is the input of bash.
type BashInput struct {
	Command string `json:"command" jsonschema:"description=The shell command to run with /bin/sh -c"`
	Workdir string `json:"workdir,omitempty" jsonschema:"description=Working directory (default: the workspace root); a directory outside the workspace needs the external_directory permission"`
	Timeout int    `json:"timeout,omitempty" jsonschema:"description=Timeout in milliseconds (default 120000, at most 600000)"`
}

// BashOutput is what a command did.
type BashOutput struct {
	Output   string   `json:"output"`
	ExitCode int      `json:"exit_code"`
	TimedOut bool     `json:"timed_out,omitempty"`
	Capped   bool     `json:"capped,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// ModelText renders the output, the notices and the exit code.
func (o BashOutput) ModelText() string {
	var b strings.Builder
	b.WriteString(o.Output)
	if o.Capped {
		fmt.Fprintf(&b, "\n[output capture stopped at %d bytes: bash's memory guard, not the tool-output limit]", BashCaptureLimit)
	}
	for _, w := range o.Warnings {
		b.WriteString("\n[warning: " + w + "]")
	}
	if o.TimedOut {
		b.WriteString("\n[the command timed out and its process group was killed]")
	}
	fmt.Fprintf(&b, "\n(exit code %d)", o.ExitCode)
	return strings.TrimLeft(b.String(), "\n")
}

const bashDescription = `Run a shell command with /bin/sh -c in the workspace (or in workdir) and return its combined stdout and stderr and its exit code.
The command runs UNSANDBOXED with the full authority of the user running the engine: their files, processes and network.
Every simple command in it (in lists, pipelines, subshells, substitutions, functions) is checked against the bash permission rules on its own.
Output is captured up to 1 MiB. The timeout is in milliseconds: default 120000, at most 600000; on timeout the whole process group is killed.`

// Bash builds bash. Its permission requests: external_directory for a
// workdir outside the location, then bash with one resource per simple
// command (saved each by its exact text); a command that does not parse
// always asks, with the whole text.
func Bash() (*executor.Tool, error) {
	return executor.New("bash", bashDescription, runBash,
		executor.WithEffect(descriptor.SideEffecting),
		executor.WithRequests(func(c executor.Call, in BashInput) ([]descriptor.Request, error) {
			if strings.TrimSpace(in.Command) == "" {
				return nil, errors.New("command is empty")
			}
			if in.Timeout < 0 || time.Duration(in.Timeout)*time.Millisecond > BashMaxTimeout {
				return nil, fmt.Errorf("timeout %d ms: at most %d", in.Timeout, BashMaxTimeout.Milliseconds())
			}
			dir, err := resolveDir(c, in.Workdir)
			if err != nil {
				return nil, err
			}
			cmds, parsed := SimpleCommands(in.Command)
			return append(dir.Requests(), descriptor.Request{Action: "bash", Resources: cmds, Save: cmds, Ask: !parsed}), nil
		}),
	)
}

func runBash(ctx context.Context, c executor.Call, in BashInput) (BashOutput, error) {
	dir, err := resolveDir(c, in.Workdir) // again: time has passed since the decision
	if err != nil {
		return BashOutput{}, err
	}
	timeout := BashDefaultTimeout
	if in.Timeout > 0 {
		timeout = time.Duration(in.Timeout) * time.Millisecond
	}
	cmd := exec.Command("/bin/sh", "-c", in.Command)
	cmd.Dir = dir.Real
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out capped
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return BashOutput{}, fmt.Errorf("start /bin/sh: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	res := BashOutput{Warnings: outsidePaths(in.Command, dir.Real)}
	var werr error
	select {
	case werr = <-done:
	case <-timer.C:
		res.TimedOut = true
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		werr = <-done
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return BashOutput{}, fmt.Errorf("the call was cancelled and the command's process group killed: %w", ctx.Err())
	}
	res.Output, res.Capped = out.result()
	var exit *exec.ExitError
	switch {
	case werr == nil:
	case errors.As(werr, &exit):
		res.ExitCode = exit.ExitCode()
		if res.ExitCode < 0 {
			res.ExitCode = 128 + int(syscall.SIGKILL)
		}
	default:
		return BashOutput{}, werr
	}
	return res, nil
}

// capped is an output buffer that keeps the first BashCaptureLimit bytes.
type capped struct {
	mu   sync.Mutex
	b    []byte
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := BashCaptureLimit - len(c.b); room < len(p) {
		c.b = append(c.b, p[:max(room, 0)]...)
		c.over = true
	} else {
		c.b = append(c.b, p...)
	}
	return len(p), nil
}

func (c *capped) result() (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(c.b), c.over
}

// outsidePaths warns of absolute path arguments outside the working
// directory: warnings, never prompts (the rules decide on the commands).
func outsidePaths(command, workdir string) []string {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		return nil
	}
	var warnings []string
	syntax.Walk(f, func(n syntax.Node) bool {
		call, ok := n.(*syntax.CallExpr)
		if !ok {
			return true
		}
		for _, w := range call.Args {
			lit := w.Lit()
			if !filepath.IsAbs(lit) {
				continue
			}
			if rel, err := filepath.Rel(workdir, filepath.Clean(lit)); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
				warnings = append(warnings, lit+" is outside the working directory")
			}
		}
		return true
	})
	return warnings
}
