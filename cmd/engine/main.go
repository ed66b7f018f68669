// Command engine is Stepgate's binary: it serves the engine (an embedded
// NATS server by default, or an external cluster), drives scripted runs,
// shows runs, runs the demo and the benchmark. See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"

	"github.com/stepgate/stepgate/bench"
	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/projection"
)

func main() {
	ctx, stop := signalContext(os.Stderr, os.Exit)
	err := run(envTrace(ctx, os.Getenv), os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "engine:", err)
		os.Exit(exitCode(err))
	}
}

// exitNoPerm is the exit status of a request the NATS server refused for
// the user's permissions (permission_denied; sysexits' EX_NOPERM).
const exitNoPerm = 77

// exitCode is 2 for usage errors, the error's own ExitCode when it has one,
// 77 for permission_denied, 1 otherwise.
func exitCode(err error) int {
	var coded interface{ ExitCode() int }
	if errors.As(err, &coded) {
		return coded.ExitCode()
	}
	var u usageError
	if errors.As(err, &u) {
		return 2
	}
	if errors.Is(err, sgclient.ErrPermissionDenied) {
		return exitNoPerm
	}
	return 1
}

// usageError is a command line the binary cannot act on.
type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }

// verb is one CLI verb: it parses its own flags from args.
type verb struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func verbs() []verb {
	return []verb{
		{"serve", "run an engine host and its NATS service", runServe},
		{"run", "drive a scripted run (one line of the script per step)", runScript},
		{"agent", "a model drives a run through the gate (agent --provider openai|openai-responses|anthropic --model NAME \"TASK\"; --resume RUN goes on)", runAgent},
		{"runs", "list runs", runRuns},
		{"locations", "list the fleet's hosts, what each holds, and where the locations of open runs are held", runLocations},
		{"show", "show one run: every step, call, verdict, rule, ticket and result (--at STEP: every projection as it stood after a step)", runShow},
		{"report", "write one run as a self-contained HTML page: timeline, chart, tickets, arguments and results (report RUN -o FILE.html)", runReport},
		{"fork", "start a run from RUN's first steps, copied, not run again (fork RUN --at STEP)", runFork},
		{"tickets", "list the confirmations waiting for a human", runTickets},
		{"approve", "approve a ticket (--always saves it for the project; --args JSON edits the call)", runApprove},
		{"reject", "reject a ticket (-m feedback; without it the run ends declined)", runReject},
		{"end", "end a run that nobody will end (end RUN [--cause cancelled|completed|declined|failed] [--reason TEXT])", runEnd},
		{"grants", "list saved approvals; grants revoke ID withdraws one", runGrants},
		{"operator", "operator token NAME: a new token for the web app (serve --http) and the line of the user's file that declares it", runOperator},
		{"sweep", "delete the output files whose retention has passed, now", runSweep},
		{"recover", "settle the steps a host that is gone for good left open (recover HOST)", runRecover},
		{"config", "config check|push|show: validate the configuration and print the effective rules and MCP servers; push a user file as the fleet's (--nats), show the fleet's", runConfig},
		{"diff", "compare two runs step by step: the first divergence and a summary (exit 1 when they differ)", runDiff},
		{"audit", "export every decision of the log, one line each (--format jsonl|csv)", runAudit},
		{"replay", "replay --policy FILE: re-decide recorded calls against a candidate configuration (exit 1 when a verdict changes)", runReplay},
		{"verify", "rebuild every projection from the log and compare each with the checkpoint", runVerify},
		{"mcp", "mcp serve: Stepgate as an MCP server (each tools/call a step through the gate); mcp ls: the location's MCP servers and their tools", runMCP},
		{"quarantine", "list the messages of the log every fold skipped, and why", runQuarantine},
		{"demo", "a full run on an embedded server, across an engine restart", runDemo},
		{"bench", "run a benchmark workload (see WORKLOADS.md)", runBench},
	}
}

// run dispatches args to a verb.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return usageError{"no verb given"}
		}
		return nil
	}
	for _, v := range verbs() {
		if v.name == args[0] {
			return v.run(ctx, args[1:], stdout, stderr)
		}
	}
	switch args[0] { // processes a verb starts of its own binary, not verbs
	case "demo-resume":
		return runDemoResume(ctx, args[1:], stdout, stderr)
	case bench.ProcVerb:
		return bench.Proc(ctx, args[1:], stdout, stderr)
	}
	usage(stderr)
	return usageError{fmt.Sprintf("unknown verb %q", args[0])}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: engine <verb> [flags]   (engine <verb> -h for its flags)")
	for _, v := range verbs() {
		fmt.Fprintf(w, "  %-8s %s\n", v.name, v.summary)
	}
}

// newFlags returns a flag set for a verb that reports errors as usage errors.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("engine "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parse parses args — flags may come before or after the positional
// arguments (`engine approve TICKET --always`) — turning flag errors into
// usage errors. The positional arguments are then fs.Args().
func parse(fs *flag.FlagSet, args []string) error {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return err
			}
			return usageError{err.Error()}
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	return fs.Parse(append([]string{"--"}, positional...))
}

// version is the module version of this build, "0.0.0-dev" for a source build (the service needs SemVer).
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "0.0.0-dev"
}

// logger writes warnings and errors to stderr; STEPGATE_LOG_LEVEL (debug,
// info, warn, error) sets another level.
func logger(stderr io.Writer) *slog.Logger {
	level := slog.LevelWarn
	if v := os.Getenv("STEPGATE_LOG_LEVEL"); v != "" {
		if err := level.UnmarshalText([]byte(v)); err != nil {
			level = slog.LevelWarn
		}
	}
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
}

func projectionOptions(log *slog.Logger) projection.Options {
	return projection.Options{Logger: log}
}
