package builtin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/sandbox"
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
	Command string `json:"command" jsonschema:"description=The command to run with bash -c"`
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
	// Sandbox is what the sandbox enforced on the command, when the call
	// had a policy (see executor.Call.Sandbox); nil when it ran
	// unsandboxed.
	Sandbox *sandbox.Enforced `json:"sandbox,omitempty"`
}

// Failed reports a command that did not succeed: a non-zero exit status,
// or a timeout (see executor.Failer).
func (o BashOutput) Failed() bool { return o.ExitCode != 0 || o.TimedOut }

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

const bashDescription = `Run a command with bash (bash --norc --noprofile -c, no startup files) in the workspace (or in workdir) and return its combined stdout and stderr and its exit code.
Unless the run has a sandbox profile, the command runs UNSANDBOXED with the full authority of the user running the engine: their files, processes and network; under workspace-write it may write only the workspace (and the profile's writable roots), under read-only nothing, and its network is off or limited to the profile's hosts.
Every simple command in it (in lists, pipelines, subshells, substitutions, function bodies, and the commands that xargs, find -exec, env, nice, nohup, timeout, sudo, watch, command, builtin, exec and sh -c/bash -c run) is checked against the bash permission rules on its own.
A file it writes by a redirection (>, >>, >|, <>, &>, &>>, >&file) needs the edit permission on that path, and external_directory outside the workspace; /dev/null and the standard streams need none.
What the permission check cannot know exactly always asks for confirmation of the whole command: eval, source, aliases, traps with commands, coproc, a command name or redirection target that is an expansion, arithmetic over variables, git options and aliases that run programs.
Output is captured up to 1 MiB. The timeout is in milliseconds: default 120000, at most 600000; on timeout the whole process group is killed.`

// Bash builds bash. Its permission requests: external_directory for a
// workdir outside the location, then those of bashRequests: bash with one
// resource per simple command (saved each by its exact text), the write
// tool's requests for each file the command writes, and the whole text,
// always asking, when the parser cannot model the command exactly (or it
// does not parse). The command runs with bash, the dialect it was parsed
// in, never with another shell.
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
			return bashRequests(c, in.Command, dir), nil
		}),
	)
}

func runBash(ctx context.Context, c executor.Call, in BashInput) (BashOutput, error) {
	dir, err := resolveDir(c, in.Workdir) // again: time has passed since the decision
	if err != nil {
		return BashOutput{}, err
	}
	for _, r := range c.Paths { // every file it writes is still where it was approved
		if _, err := c.Resolve(r.Path, false); errors.Is(err, executor.ErrPathChanged) {
			return BashOutput{}, err
		}
	}
	timeout := BashDefaultTimeout
	if in.Timeout > 0 {
		timeout = time.Duration(in.Timeout) * time.Millisecond
	}
	shell, err := bashPath()
	if err != nil {
		return BashOutput{}, err
	}
	var out capped
	cmd, err := bashCommand(c, []string{shell, "--norc", "--noprofile", "-c", in.Command}, dir.Real)
	if err != nil {
		return BashOutput{}, err
	}
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		var refused *sandbox.Error
		if errors.As(err, &refused) {
			return BashOutput{}, err // the sandbox could not be put in place: nothing ran
		}
		return BashOutput{}, fmt.Errorf("start %s: %w", shell, err)
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
		_ = cmd.Kill()
		werr = <-done
	case <-ctx.Done():
		_ = cmd.Kill()
		<-done
		return BashOutput{}, fmt.Errorf("the call was cancelled and the command's process group killed: %w", ctx.Err())
	}
	res.Output, res.Capped = out.result()
	var refused *sandbox.Error
	if errors.As(werr, &refused) {
		return BashOutput{}, werr // the helper failed before the command ran
	}
	if cmd.Sandboxed() {
		e := cmd.Enforced()
		res.Sandbox = &e
		c.Contained(e)
	}
	var exit interface{ ExitCode() int } // *exec.ExitError, or *sandbox.ExitError from a pool
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

// bashCommand is the command in its own process group, under the call's
// sandbox policy when it has one (the helper is then PID 1 of its PID
// namespace: killing its group kills every process of the command), run
// by a warm helper of the call's pool when it has one (killing the call
// kills its session, and its helper the rest of its namespace).
func bashCommand(c executor.Call, argv []string, dir string) (*sandbox.Cmd, error) {
	p := sandbox.Policy{Mode: sandbox.Off}
	if c.Sandbox != nil {
		p = *c.Sandbox
		if p.Location == "" {
			p.Location = c.Location
		}
	}
	var cmd *sandbox.Cmd
	var err error
	if c.Sandboxes != nil {
		cmd, err = c.Sandboxes.Command(p, argv, dir, bashEnv(os.Environ()))
	} else {
		cmd, err = sandbox.Command(p, argv, dir, bashEnv(os.Environ()))
	}
	if err != nil {
		return nil, err
	}
	if !cmd.Sandboxed() {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	return cmd, nil
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
