package builtin

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// traceTokens are what FuzzBashTrace builds commands from: three stand-in
// programs (stubs that only log their name), harmless builtins, the wrappers
// the analysis knows (the real ones, which find only the stubs on PATH), and
// the shell syntax where parsers disagree. No token and no concatenation of
// tokens names a program or builtin that could touch anything outside the
// run's temporary directory: there is no "/", no ".", no eval or source, and
// PATH holds only the stubs and the wrappers.
var traceTokens = []string{
	"s1", "s2", "s3", "echo", "true", "a", "x", "-c", "1",
	" ", " ", " ", ";", "\n", "&&", "||", "|", "|&",
	"(", ")", "{ ", " }", "$(", "`", "'", "\"", "$'", "\\", "((", "))", "$((", "$[", "]", "[",
	"<", ">", ">>", "<(", ">(", "<<<", "2>&1", "&>",
	"#", "=", "x=", "$x", "${x}", "${x:-s2}", "*", "{a,b}", "!",
	"if ", "then ", "else ", "fi", "for x in ", "do ", "done", "case ", " in ", "esac", ";;",
	"[[ ", " ]]", " -eq ", "<<E\n", "\nE\n", "<<'E'\n",
	"sh -c ", "bash -c ", "env ", "xargs ", "command ", "nohup ", "timeout 5 ", "nice ",
}

// traceWrappers are the real programs put on the stubs' PATH.
var traceWrappers = []string{"sh", "bash", "env", "xargs", "nohup", "timeout", "nice"}

// traceUnsafe matches what the harness never runs: a function definition
// (name, then "(", maybe with quotes, blanks or backslashes between: a
// recursive function could fork without end) and a C-style for loop (which
// could loop for ever).
var traceUnsafe = regexp.MustCompile(`[A-Za-z0-9_'"\\][ \t\n\\'"]*\(|for[ \t\n\\]*\(\(|function`)

// traceCommand maps fuzz bytes to a command of at most 48 tokens.
func traceCommand(data []byte) string {
	var b strings.Builder
	for i, c := range data {
		if i == 48 {
			break
		}
		b.WriteString(traceTokens[int(c)%len(traceTokens)])
	}
	return b.String()
}

// traceEncode is traceCommand's inverse for seeds: the bytes of tokens.
func traceEncode(tokens ...string) []byte {
	var out []byte
	for _, t := range tokens {
		for i, tok := range traceTokens {
			if tok == t {
				out = append(out, byte(i))
				break
			}
		}
	}
	return out
}

// traceEnv is a directory of stand-ins: s1, s2 and s3 append their name to a
// log and exit 0; the wrappers are links to the real programs.
type traceEnv struct{ bin, log, bash string }

func newTraceEnv(t testing.TB) traceEnv {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"s1", "s2", "s3"} {
		stub := "#!/bin/sh\necho " + s + " >> \"$SG_STUBLOG\"\n"
		if err := os.WriteFile(filepath.Join(bin, s), []byte(stub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, w := range traceWrappers {
		real, err := exec.LookPath(w)
		if err != nil {
			t.Skipf("%s is not installed", w)
		}
		if err := os.Symlink(real, filepath.Join(bin, w)); err != nil {
			t.Fatal(err)
		}
	}
	return traceEnv{bin: bin, log: filepath.Join(dir, "stubs.log"), bash: bash}
}

// run runs command as the bash tool does, in a fresh directory, and returns
// the stand-ins it executed.
func (e traceEnv) run(t testing.TB, command string) []string {
	t.Helper()
	_ = os.Remove(e.log)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.bash, "--norc", "--noprofile", "-c", command)
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"PATH=" + e.bin, "SG_STUBLOG=" + e.log, "HOME=" + cmd.Dir}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	_ = cmd.Run()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // what the command left behind
	data, err := os.ReadFile(e.log)
	if err != nil {
		return nil
	}
	return strings.Fields(string(bytes.TrimSpace(data)))
}

// checkTrace runs command and fails when bash executed a stand-in that is
// not the name of one of the analysis's commands. A command the analysis
// asks about as a whole is not run: the human sees all of it.
func checkTrace(t *testing.T, e traceEnv, command string) {
	if traceUnsafe.MatchString(command) {
		return
	}
	a := analyzeBash(command)
	if !a.parsed || len(a.asks) > 0 {
		return
	}
	names := map[string]bool{}
	for _, c := range a.cmds {
		names[c.name] = true
	}
	for _, ran := range e.run(t, command) {
		if !names[ran] {
			t.Fatalf("bash ran %s, which no resource names\ncommand: %q\nresources: %q", ran, command, a.cmds)
		}
	}
}

var traceSeeds = [][]string{
	{"s1"},
	{"s1", ";", "s2"},
	{"echo", " ", "$'", "\\", "'", " ", ";", " ", "s2", " ", "#", " ", "'"},
	{"s1", ";", "((", "s2", "<", "x", "))"},
	{"s1", " ", "$(", "s2", ")"},
	{"s1", " ", "`", "s2", "`"},
	{"echo", " ", ">(", "s3", ")"},
	{"sh -c ", "'", "s1", ";", "s2", "'"},
	{"bash -c ", "\"", "s1", "|", "s3", "\""},
	{"env ", "x=", "1", " ", "s2"},
	{"echo", " ", "a", "|", "xargs ", "s1"},
	{"command ", "s2", "&&", "s3"},
	{"nohup ", "s1", " ", "2>&1"},
	{"timeout 5 ", "nice ", "s3"},
	{"s1", "<<E\n", "$(", "s2", ")", "\nE\n"},
	{"for x in ", "a", ";", "do ", "s1", ";", "done"},
	{"if ", "s1", ";", "then ", "s2", ";", "else ", "s3", ";", "fi"},
	{"case ", "a", " in ", "a", ")", " ", "s1", ";;", "esac"},
	{"[[ ", "1", " -eq ", "1", " ]]", "&&", "s2"},
	{"echo", " ", "$((", "1", "))", ";", "s1"},
	{"s1", "\\", "\n", "s2"},
	{"echo", " ", "\"", "$(", "s1", ")", "\""},
	{"s1", " ", "#", "$(", "s2", ")"},
	{"{ ", "s1", ";", " }", ">", "x"},
	{"(", "s1", ")", "|&", "s2"},
}

// FuzzBashTrace asserts that every program bash runs from a command is the
// name of one of the resources the analysis raised for it, comparing the
// parse with what bash executes on harmless stand-ins.
func FuzzBashTrace(f *testing.F) {
	for _, s := range traceSeeds {
		f.Add(traceEncode(s...))
	}
	e := newTraceEnv(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		checkTrace(t, e, traceCommand(data))
	})
}

// The seeds run as a test of their own, and the harness is checked to see
// what bash runs: a stand-in bash ran but the analysis did not name fails.
func TestBashTraceHarness(t *testing.T) {
	e := newTraceEnv(t)
	if got := e.run(t, "s1; (s2) | s3 $(s1)"); len(got) != 4 {
		t.Fatalf("the stand-ins logged %q, want four runs", got)
	}
	if got := e.run(t, "sh -c 's2'; env x=1 s3; echo a | xargs s1"); strings.Join(got, " ") != "s2 s3 s1" {
		t.Fatalf("the wrappers ran %q", got)
	}
	// The arithmetic class is real: bash runs s2 from a for word, and no
	// simple command names it, so only the analysis's ask covers it.
	injection := "for x in 'a[$(s2)]'; do echo $((x)); done"
	if got := e.run(t, injection); strings.Join(got, " ") != "s2" {
		t.Fatalf("the arithmetic injection ran %q", got)
	}
	if a := analyzeBash(injection); len(a.asks) == 0 {
		t.Fatalf("%q: no ask, and bash runs s2 unnamed: %q", injection, a.cmds)
	}
	for _, s := range traceSeeds {
		checkTrace(t, e, traceCommand(traceEncode(s...)))
	}
}
