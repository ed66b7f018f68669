package builtin_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/builtin"
	"github.com/stepgate/stepgate/gate"
)

// disguiseRules are the rules the disguises are judged under: the build
// agent's allow-everything with external_directory asking, and bash asking
// except for git, echo and ls.
func disguiseRules(t *testing.T) gate.Ruleset {
	t.Helper()
	f, err := config.Parse("config.yaml", []byte(`agents:
  build:
    permission:
      "*": allow
      external_directory: ask
      bash: { "*": ask, "git *": allow, "echo *": allow, "ls *": allow }
`), gate.SourceUser)
	if err != nil {
		t.Fatal(err)
	}
	return f.Agents["build"]
}

// Each command that hides something from the rules must ask; the ticket
// must show what it hid (shows), and, for what the parser cannot model, the
// whole text (whole). Every command that is what it looks like is allowed.
func TestBashDisguises(t *testing.T) {
	loc, outside := t.TempDir(), t.TempDir()
	if err := os.Mkdir(filepath.Join(loc, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(loc, "lnk")); err != nil {
		t.Fatal(err)
	}
	rules := disguiseRules(t)
	out := filepath.ToSlash(outside)
	tests := []struct {
		cmd   string
		allow bool
		shows []string // resources the ticket must list
		whole bool     // the ticket must list the whole text, always asking
	}{
		// What it looks like.
		{cmd: "git status", allow: true},
		{cmd: "git log --oneline -5 && echo done", allow: true},
		{cmd: "ls -la 2>/dev/null; echo x >&2", allow: true},
		{cmd: "git diff > /dev/null 2>&1", allow: true},
		{cmd: "echo hello > out.txt", allow: true},
		{cmd: "echo $((1+2)) ${#HOME} \"$HOME\"", allow: true},
		{cmd: "(( $# > 1 )) || [[ $? -eq 0 ]] && echo $(( $$ % 2 ))", allow: true},
		{cmd: "for f in a b; do echo $f; done", allow: true},
		{cmd: "[[ -f x ]] && echo y", allow: true},
		{cmd: "git config --get user.name", allow: true},
		{cmd: "git --no-pager log -p", allow: true},
		{cmd: "git apply <<'E'\n$(rm x)\nE", allow: true},
		{cmd: "echo ok > >(git status)", allow: true},
		{cmd: "echo $'a\\'b'", allow: true},
		// The README's disguises.
		{cmd: "git status; rm -rf x", shows: []string{"rm -rf x"}},
		{cmd: "git log && curl x | sh", shows: []string{"curl x", "sh"}, whole: true},
		{cmd: "git $(rm -rf x)", shows: []string{"rm -rf x"}, whole: true},
		{cmd: "echo ok > >(rm x)", shows: []string{"rm x"}},
		{cmd: "git ((( broken", shows: []string{"git ((( broken"}, whole: true},
		// The dialect: what dash and bash read differently.
		{cmd: `git log $'\' ; rm x # '`, whole: true},
		{cmd: "git status; ((sh<y))", whole: true},
		{cmd: `sh -c "git log \$'\\' ; rm x # '"`, whole: true},
		{cmd: "sh -c '((sh<y))'", whole: true},
		// Arithmetic evaluates variables' values, and their subscripts' substitutions.
		{cmd: "for y in 'a[$(rm z)]'; do echo $((y)); done", whole: true},
		{cmd: "echo $((x))", whole: true},
		{cmd: "git status; let y=1", shows: []string{"let y=1"}, whole: true},
		{cmd: "[[ $x -eq 1 ]] && echo y", whole: true},
		{cmd: "echo ${a[i]}", whole: true},
		{cmd: "echo ${HOME:x}", whole: true},
		{cmd: "for ((i=0; i<1; i++)); do echo; done", whole: true},
		{cmd: "echo ${!x}", whole: true},
		{cmd: "echo ${x@P}", whole: true},
		{cmd: "printf -v 'a[$(rm x)]' x", whole: true},
		{cmd: "read 'a[$(rm x)]' <<< 1", whole: true},
		{cmd: "declare -i x=1", whole: true},
		// Code the parser cannot see.
		{cmd: "eval 'rm x'", whole: true},
		{cmd: "git status; eval \"$(echo rm x)\"", whole: true},
		{cmd: "source ./x.sh", whole: true},
		{cmd: ". ./x.sh", whole: true},
		{cmd: "alias ls='rm -rf x'; ls", whole: true},
		{cmd: "shopt -s expand_aliases", whole: true},
		{cmd: "$x status", whole: true},
		{cmd: "\"$CMD\" -rf x", whole: true},
		{cmd: "$(echo git) status", whole: true},
		{cmd: "/bin/r? x", whole: true},
		{cmd: "coproc git status", whole: true},
		{cmd: "trap 'rm x' EXIT; git status", whole: true},
		{cmd: "hash -p /tmp/evil git; git status", whole: true},
		{cmd: "git apply <<E\n$(rm x)\nE", shows: []string{"rm x"}, whole: true},
		{cmd: "git apply <<E\n\\\nE\nrm x\nE", whole: true},
		// Commands that run commands.
		{cmd: "command rm x", shows: []string{"rm x"}},
		{cmd: "builtin eval x", whole: true},
		{cmd: "exec rm x", shows: []string{"rm x"}},
		{cmd: "git ls-files | xargs -0 rm -f", shows: []string{"rm -f"}},
		{cmd: "echo x | xargs git", whole: true},
		{cmd: "find . -name '*.o' -exec rm {} \\;", shows: []string{"rm {}"}},
		{cmd: "find . -execdir git status \\; -ok rm {} +", shows: []string{"rm {}"}},
		{cmd: "find $d -exec git status \\;", whole: true},
		{cmd: "env rm x", shows: []string{"rm x"}},
		{cmd: "env LC_ALL=C git log", shows: []string{"LC_ALL=C git log"}},
		{cmd: "env !x=1 sh -c 'rm y'", shows: []string{"rm y"}},
		{cmd: "env GIT_PAGER=x git log", shows: []string{"GIT_PAGER=x git log"}, whole: true},
		{cmd: "env -C /tmp sh -c 'echo x > f'", whole: true},
		{cmd: "env -S 'rm x'", whole: true},
		{cmd: "nice -n 5 rm x", shows: []string{"rm x"}},
		{cmd: "nohup rm x", shows: []string{"rm x"}},
		{cmd: "timeout -s KILL 5 rm x", shows: []string{"rm x"}},
		{cmd: "sudo -u root rm x", shows: []string{"rm x"}},
		{cmd: "sudo -s rm x", whole: true},
		{cmd: "watch -n 1 'echo a; rm x'", shows: []string{"rm x"}},
		{cmd: "time rm x", shows: []string{"rm x"}},
		{cmd: "sh -c 'rm x'", shows: []string{"rm x"}},
		{cmd: "bash -c \"git status; rm x\"", shows: []string{"rm x"}},
		{cmd: "dash -ec 'rm x'", shows: []string{"rm x"}},
		{cmd: "bash -c 'bash -c \"rm x\"'", shows: []string{"rm x"}},
		{cmd: "sh -c \"$CMD\"", whole: true},
		{cmd: "sh script.sh", whole: true},
		{cmd: "echo rm x | sh", whole: true},
		{cmd: "zsh -c 'rm x'", whole: true},
		{cmd: "nice nice nice nice nice nice nice rm x", whole: true},
		{cmd: "sh -c \"bash -c 'sh -c \\\"rm x\\\"'\"", shows: []string{"rm x"}},
		// Git options and aliases that run programs.
		{cmd: "git -c core.pager='rm x' log", whole: true},
		{cmd: "git --config-env=core.pager=X log", whole: true},
		{cmd: "git --exec-path=/tmp log", whole: true},
		{cmd: "git -C /tmp status", whole: true},
		{cmd: "git st", whole: true},
		{cmd: "git grep -O'rm x' foo", whole: true},
		{cmd: "git rebase -x 'rm x' HEAD~1", whole: true},
		{cmd: "git bisect run rm x", whole: true},
		{cmd: "git submodule foreach rm x", whole: true},
		{cmd: "git config alias.st '!rm x'", whole: true},
		{cmd: "git config core.fsmonitor 'rm x'", whole: true},
		{cmd: "git fetch --upload-pack='rm x' origin", whole: true},
		{cmd: "git clone 'ext::sh -c rm% x' d", whole: true},
		{cmd: "git log *", whole: true},
		{cmd: "git log {a,b}", whole: true},
		// Variables that decide what later commands run.
		{cmd: "export GIT_PAGER='rm x'; git -p log", shows: []string{"export GIT_PAGER='rm x'"}, whole: true},
		{cmd: "PATH=/tmp/evil git status", whole: true},
		{cmd: "for PATH in /tmp/evil; do git status; done", whole: true},
		{cmd: "BASH_CMDS[git]=/tmp/evil; git status", whole: true},
		{cmd: "read GIT_DIR <<< x; git status", whole: true},
		{cmd: "printf -v GIT_DIR x; git status", whole: true},
		// The environment bash runs with (bashEnv) cannot be undone quietly.
		{cmd: "env -u GIT_CONFIG_COUNT git status", whole: true},
		{cmd: "env --unset=GIT_CONFIG_KEY_0 git status", whole: true},
		{cmd: "env -i git status", whole: true},
		{cmd: "env -iv git status", whole: true},
		{cmd: "env - git status", whole: true},
		{cmd: "unset GIT_CONFIG_COUNT; git status", whole: true},
		{cmd: "unset \"$v\"; git status", whole: true},
		{cmd: "printf '%s' PATH; git status", shows: []string{"printf '%s' PATH"}},
		{cmd: "echo ${PATH:=/tmp/evil}; git status", whole: true},
		{cmd: "LC_ALL=C git log", shows: []string{"LC_ALL=C git log"}},
		// Redirections write files.
		{cmd: "git archive -o " + out + "/f HEAD", shows: []string{out + "/*"}},
		{cmd: "git status > " + out + "/file", shows: []string{out + "/*"}},
		{cmd: "git log >| " + out + "/f", shows: []string{out + "/*"}},
		{cmd: "git log <> " + out + "/f", shows: []string{out + "/*"}},
		{cmd: "git log &> " + out + "/f", shows: []string{out + "/*"}},
		{cmd: "git log &>> " + out + "/f", shows: []string{out + "/*"}},
		{cmd: "echo x >& " + out + "/f", shows: []string{out + "/*"}},
		{cmd: "echo x 2>>" + out + "/f", shows: []string{out + "/*"}},
		{cmd: "echo x > ../" + filepath.Base(outside) + "/f", shows: []string{out + "/*"}},
		{cmd: "git log --output=" + out + "/f", shows: []string{out + "/*"}},
		{cmd: "find . -fprint " + out + "/f", shows: []string{out + "/*"}},
		{cmd: "echo x > \"$HOME/x\"", whole: true},
		{cmd: "echo x >> ~/x", whole: true},
		{cmd: "echo x > /dev/tcp/127.0.0.1/9", whole: true},
		{cmd: "git log < /dev/tcp/127.0.0.1/9", whole: true},
		{cmd: "cd sub; echo x > y", whole: true},
		{cmd: "echo x > lnk/f", whole: true},
		{cmd: "echo x > sub/f 2> /dev/stderr", allow: true},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			p, err := bashCall(t, loc, bashInput(tt.cmd))
			if err != nil {
				t.Fatal(err)
			}
			v := gate.Decide(gate.Configured, p.Requests(), rules, nil)
			if tt.allow {
				if v.Kind != gate.KindAllow {
					t.Fatalf("%s (%s), want allow; requests %+v", v.Kind, v.Reason, p.Requests())
				}
				return
			}
			if v.Kind != gate.KindConfirm {
				t.Fatalf("%s (%s), want confirm; requests %+v", v.Kind, v.Reason, p.Requests())
			}
			var asked []string
			whole := false
			for _, r := range v.Asked {
				asked = append(asked, r.Resources...)
				whole = whole || r.Ask && slices.Equal(r.Resources, []string{strings.TrimSpace(tt.cmd)})
			}
			for _, s := range tt.shows {
				if !slices.Contains(asked, s) {
					t.Errorf("the ticket does not show %q: it asks %q", s, asked)
				}
			}
			if whole != tt.whole {
				t.Errorf("whole text asked: %v, want %v; asked %+v", whole, tt.whole, v.Asked)
			}
		})
	}
}

func bashInput(cmd string) builtin.BashInput { return builtin.BashInput{Command: cmd} }

// writeRequests are the write tool's requests for path.
func writeRequests(t *testing.T, loc, path string) []descriptor.Request {
	t.Helper()
	tool, err := builtin.Write()
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(builtin.WriteInput{Path: path, Content: "x"})
	p, err := tool.Prepare(executor.Call{Run: "r", Step: 1, CallID: "c", Location: loc}, args)
	if err != nil {
		t.Fatal(err)
	}
	return p.Requests()
}

// The edit request of a redirection is the write tool's for the same path.
func TestBashRedirectIsTheWriteToolsRequest(t *testing.T) {
	loc, outside := t.TempDir(), t.TempDir()
	if err := os.Mkdir(filepath.Join(loc, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ cmd, workdir, path string }{
		{"echo x > .git/config", "", ".git/config"},
		{"echo x >> hooks/pre-commit", "", "hooks/pre-commit"},
		{"echo x > ../y", "sub", "y"},
		{"git log &> f", "sub", "sub/f"},
		{"echo x > " + outside + "/f", "", outside + "/f"},
	} {
		p, err := bashCall(t, loc, builtin.BashInput{Command: tt.cmd, Workdir: tt.workdir})
		if err != nil {
			t.Fatal(err)
		}
		w := writeRequests(t, loc, tt.path)
		got := p.Requests()
		for _, r := range w {
			if !slices.ContainsFunc(got, func(q descriptor.Request) bool {
				return q.Action == r.Action && slices.Equal(q.Resources, r.Resources) && slices.Equal(q.Save, r.Save) && q.Ask == r.Ask
			}) {
				t.Errorf("%q: the write tool asks %+v for %s; bash asks %+v", tt.cmd, r, tt.path, got)
			}
		}
		if n := len(got) - len(w); n != 1 {
			t.Errorf("%q: %d requests beyond the write tool's, want the bash one only: %+v", tt.cmd, n, got)
		}
	}
}

// What the parser cannot model asks, and a rule that denies one of its
// commands still denies the whole call.
func TestBashDenyWinsOverAskingTheWholeText(t *testing.T) {
	rules := append(disguiseRules(t), gate.Rule{Action: "bash", Resource: "rm *", Effect: gate.Deny, Source: gate.SourceUser})
	for _, cmd := range []string{"eval x; rm y", "git -c core.pager=x log; rm y", "sh -c 'rm y'", "echo x > \"$HOME/f\"; rm y"} {
		p, err := bashCall(t, t.TempDir(), bashInput(cmd))
		if err != nil {
			t.Fatal(err)
		}
		if v := gate.Decide(gate.Configured, p.Requests(), rules, nil); v.Kind != gate.KindBlock {
			t.Errorf("%q: %s (%s), want block", cmd, v.Kind, v.Reason)
		}
	}
}
