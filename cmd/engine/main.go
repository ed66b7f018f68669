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
	"slices"
	"strings"

	"github.com/stepgate/stepgate/bench"
	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/executor/sandbox"
)

func main() {
	sandbox.MaybeRun() // the sandbox helper is this binary re-executed: it runs and exits here
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
	if errors.Is(err, sgclient.ErrPermissionDenied) || errors.Is(err, sgclient.ErrNotAuthenticated) {
		return exitNoPerm
	}
	return 1
}

// usageError is a command line the binary cannot act on.
type usageError struct{ msg string }

func (u usageError) Error() string { return u.msg }

// verb is one CLI verb: its help, and its run, which parses its own flags
// from args.
type verb struct {
	verbDoc
	run func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func verbs() []verb {
	v := func(name, group, summary, usage, example string, run func(context.Context, []string, io.Writer, io.Writer) error) verb {
		return verb{verbDoc{name, group, summary, usage, example}, run}
	}
	const nats = " --nats nats://127.0.0.1:4222"
	return []verb{
		v("serve", "Run an engine", "run an engine host and its NATS service", "engine serve [--data DIR | --nats URL] [--listen HOST:PORT] [--http HOST:PORT] [--locations GLOB] [flags]", "engine serve --data ./stepgate-data --http 127.0.0.1:8080", runServe),
		v("demo", "Run an engine", "a full run on an embedded server, across an engine restart (--agent: engine agent drives it against a fake model server, no key)", "engine demo [--agent] [--keep]", "engine demo --agent", runDemo),
		v("version", "Run an engine", "print this binary's module version, commit and Go version", "engine version [--json]", "engine version --json", runVersion),
		v("bench", "Run an engine", "run a benchmark workload (see docs/benchmarks.md)", "engine bench WORKLOAD|all [--quick] [--sync interval|always]", "engine bench w1 --quick", runBench),
		v("run", "Drive runs", "drive a scripted run (one line of the script per step)", "engine run --script FILE [--location DIR] [--agent NAME] [--wait] [--json] [flags]", "engine run"+nats+" --script steps.jsonl --location ~/project --wait", runScript),
		v("agent", "Drive runs", "a model drives a run through the gate: each model turn is one step, its conversation kept in the log; --resume RUN goes on from any host", "engine agent --provider openai|openai-responses|anthropic --model NAME --location DIR [--base-url URL] [--on-ask wait|exit] [--max-steps N] [--json] [flags] \"TASK\"", "engine agent --provider openai --model gpt-4.1 --base-url http://127.0.0.1:8000/v1 --location ~/project"+nats+" \"add a test for parse()\"", runAgent),
		v("runs", "Drive runs", "list runs", "engine runs [--status running|awaiting|ended] [--idle D] [--json] [flags]", "engine runs"+nats+" --status running --idle 1h", runRuns),
		v("show", "Drive runs", "show one run: every step, call, verdict, rule, ticket and result (--at STEP: every projection as it stood after a step)", "engine show RUN [--at STEP] [--json] [flags]", "engine show 01J9ZKX6W8T3M5R7N2B4C6D8EF"+nats, runShow),
		v("end", "Drive runs", "end a run that nobody will end", "engine end RUN [--cause cancelled|completed|declined|failed] [--reason TEXT] [flags]", "engine end 01J9ZKX6W8T3M5R7N2B4C6D8EF"+nats+" --reason 'left open'", runEnd),
		v("fork", "Drive runs", "start a run from RUN's first steps, copied, not run again", "engine fork RUN --at STEP [flags]", "engine fork 01J9ZKX6W8T3M5R7N2B4C6D8EF --at 3"+nats, runFork),
		v("locations", "Drive runs", "list the fleet's hosts, what each holds, and where the locations of open runs are held", "engine locations [--json] [flags]", "engine locations"+nats, runLocations),
		v("tickets", "Confirmations", "list the confirmations waiting for a human", "engine tickets [--run RUN] [--tool NAME] [--older-than D] [--all] [--json] [flags]", "engine tickets"+nats+" --tool bash", runTickets),
		v("approve", "Confirmations", "approve a ticket (--always saves it for the project; --args JSON edits the call)", "engine approve TICKET [--always [--pattern P]] [--args JSON] [--answers JSON] [flags]", "engine approve 01J9ZKX6W8T3M5R7N2B4C6D8EF"+nats, runApprove),
		v("reject", "Confirmations", "reject a ticket (-m feedback; without it the run ends declined)", "engine reject TICKET [-m FEEDBACK] [flags]", "engine reject 01J9ZKX6W8T3M5R7N2B4C6D8EF -m 'not on main'"+nats, runReject),
		v("grants", "Confirmations", "list saved approvals; grants revoke ID withdraws one", "engine grants [revoke ID] [flags]", "engine grants"+nats, runGrants),
		v("operator", "Confirmations", "a new token for the web app (serve --http) and the line of the user's file that declares it", "engine operator token NAME", "engine operator token ops-1", runOperator),
		v("report", "Replay and debugging", "write one run as a self-contained HTML page: timeline, chart, tickets, arguments and results", "engine report RUN -o FILE.html [flags]", "engine report 01J9ZKX6W8T3M5R7N2B4C6D8EF -o run.html"+nats, runReport),
		v("replay", "Replay and debugging", "re-decide recorded calls against a candidate configuration (exit 1 when a verdict changes)", "engine replay --policy FILE [--run RUN] [flags]", "engine replay --policy candidate.yaml"+nats, runReplay),
		v("diff", "Replay and debugging", "compare two runs step by step: the first divergence and a summary (exit 1 when they differ)", "engine diff RUN_A RUN_B [flags]", "engine diff 01J9ZKX6W8T3M5R7N2B4C6D8EF 01J9ZKX6W8T3M5R7N2B4C6D8EG"+nats, runDiff),
		v("audit", "Replay and debugging", "export every decision of the log, one line each", "engine audit [--format jsonl|csv] [flags]", "engine audit --format csv"+nats, runAudit),
		v("verify", "Replay and debugging", "rebuild every projection from the log and compare each with the checkpoint", "engine verify [flags]", "engine verify --data ./stepgate-data", runVerify),
		v("quarantine", "Replay and debugging", "list the messages of the log every fold skipped, and why", "engine quarantine [flags]", "engine quarantine"+nats, runQuarantine),
		v("mcp", "MCP", "mcp serve: Stepgate as an MCP server (each tools/call a step through the gate); mcp ls: the location's MCP servers and their tools", "engine mcp serve|ls [flags]", "engine mcp serve"+nats+" --location ~/project", runMCP),
		v("config", "Operations", "config check|push|show: validate the configuration and print the effective rules and MCP servers; push a user file as the fleet's (--nats), show the fleet's", "engine config check|push|show [flags]", "engine config check --location ~/project", runConfig),
		v("sweep", "Operations", "delete the output files whose retention has passed, now", "engine sweep [flags]", "engine sweep"+nats, runSweep),
		v("recover", "Operations", "settle the steps a host that is gone for good left open", "engine recover HOST [flags]", "engine recover old-host-1"+nats, runRecover),
	}
}

// verbNames are the verbs' names, for suggestions.
func verbNames() []string {
	var names []string
	for _, v := range verbs() {
		names = append(names, v.name)
	}
	return append(names, "help")
}

// run dispatches args to a verb.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		usage(stderr)
		if len(args) == 0 {
			return usageError{"no verb given"}
		}
		return nil
	}
	if args[0] == "help" {
		return runHelp(ctx, args[1:], stdout, stderr)
	}
	for _, v := range verbs() {
		if v.name == args[0] {
			return v.run(ctx, args[1:], stdout, stderr)
		}
	}
	switch args[0] { // processes a verb starts of its own binary, not verbs
	case "demo-resume":
		return runDemoResume(ctx, args[1:], stdout, stderr)
	case "demo-model":
		return runDemoModel(ctx, args[1:], stdout, stderr)
	case bench.ProcVerb:
		return bench.Proc(ctx, args[1:], stdout, stderr)
	case "docs-cli":
		return runDocsCLI(ctx, args[1:], stdout, stderr)
	}
	if near, ok := nearest(args[0], verbNames()); ok {
		return usageError{fmt.Sprintf("unknown verb %q: did you mean %q? (engine help lists the verbs)", args[0], near)}
	}
	usage(stderr)
	return usageError{fmt.Sprintf("unknown verb %q", args[0])}
}

// runHelp is `engine help [VERB [SUBCOMMAND] | connection]`: the verb's
// own help, as `engine VERB -h` prints it, on stdout.
func runHelp(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	switch {
	case len(args) == 0:
		usage(stdout)
		return nil
	case args[0] == "connection":
		helpConnection(stdout)
		return nil
	}
	if _, ok := docOf(args[0]); !ok {
		return run(ctx, args, stdout, stderr) // the unknown verb's error and suggestion
	}
	err := run(ctx, append(slices.Clone(args), "-h"), stdout, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

// withSuggestion adds the nearest flag's name to the flag package's
// "flag provided but not defined: -x".
func withSuggestion(fs *flag.FlagSet, msg string) string {
	const undefined = "flag provided but not defined: "
	name, ok := strings.CutPrefix(msg, undefined)
	if !ok {
		return msg
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if near, ok := nearest(strings.TrimLeft(name, "-"), names); ok {
		return fmt.Sprintf("%s: did you mean --%s?", msg, near)
	}
	return msg
}

// newFlags returns a flag set for a verb that reports errors as usage errors.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("engine "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = helpUsage(stderr, name, fs)
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
			return usageError{withSuggestion(fs, err.Error())}
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	return fs.Parse(append([]string{"--"}, positional...))
}

// version is the module version of this build as the NATS service
// announces it (see serviceVersion).
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		return serviceVersion(bi.Main.Version)
	}
	return serviceVersion("")
}

// serviceVersion is a module version as SemVer, which the NATS service
// framework requires: without the module's leading "v" (v1.2.3 and the
// pseudo-versions a build in a checkout gets, v0.0.0-20261202033500-abcdef012345+dirty,
// would be refused and the host would not serve), "0.0.0-dev" for a build
// that has none ("(devel)", "").
func serviceVersion(module string) string {
	if module == "" || module == "(devel)" {
		return "0.0.0-dev"
	}
	return strings.TrimPrefix(module, "v")
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
