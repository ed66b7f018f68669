package builtin_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor/builtin"
	"github.com/stepgate/stepgate/gate"
)

// allowEverything is a saved approval of every action on every resource.
var allowEverything = gate.Ruleset{{Action: "*", Resource: "*", Effect: gate.Allow, Source: gate.SourceSaved}}

// asksWhole reports whether v asks for cmd's whole text as a request that
// always asks.
func asksWhole(v gate.Verdict, cmd string) bool {
	return v.Kind == gate.KindConfirm && slices.ContainsFunc(v.Asked, func(r descriptor.Request) bool {
		return r.Ask && slices.Equal(r.Resources, []string{strings.TrimSpace(cmd)})
	})
}

// Every option of git's survey (gitOptions in shellgitopts.go) and every
// repository that is not a network one or a configured remote (here
// origin), in each form git reads — --opt=v,
// --opt v, an abbreviation, the short letter alone, bundled and with its
// value attached — asks with the whole text under "git *": allow, and no
// saved approval allows it. What looks like them and is not still runs.
func TestBashGitOptionsThatRunProgramsAsk(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is not installed: apt-get install git")
	}
	loc := t.TempDir()
	if err := os.Mkdir(filepath.Join(loc, "fake"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"remote", "add", "origin", "https://h/r"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = loc
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	rules := disguiseRules(t)
	asks := []string{
		// clone -c, --config: configuration before the fetch.
		"git clone -c core.sshCommand='touch x #' ssh://h/r d",
		"git clone -ccore.sshCommand=x ssh://h/r",
		"git clone -qc core.sshCommand=x ssh://h/r",
		"git clone -vqccore.sshCommand=x ssh://h/r",
		"git clone --config=core.sshCommand=x ssh://h/r",
		"git clone --config core.gitProxy=x git://h/r",
		"git clone --confi core.hooksPath=hooks https://h/r",
		"git clone --conf=core.fsmonitor=x https://h/r",
		"git clone --c protocol.ext.allow=always https://h/r",
		"git clone --depth 1 -c core.pager=x https://h/r d",
		// --template, --separate-git-dir: hooks and repositories elsewhere.
		"git clone --template=hooks https://h/r",
		"git clone --template hooks https://h/r",
		"git clone --templ=hooks https://h/r",
		"git init --template=hooks",
		"git init --tem hooks x",
		"git init --separate-git-dir=/tmp/g",
		"git init --separate-git-dir /tmp/g",
		"git clone --separate-git-dir=/tmp/g https://h/r",
		"git clone --sep /tmp/g https://h/r",
		// --reference: another repository's objects.
		"git clone --reference /tmp/o https://h/r",
		"git clone --reference-if-able=/tmp/o https://h/r",
		"git clone --refer /tmp/o https://h/r",
		"git submodule update --reference /tmp/o",
		// upload-pack, receive-pack, exec: programs in place of git's.
		"git clone -u 'touch x' https://h/r",
		"git clone -u'touch x' https://h/r",
		"git clone -qu x https://h/r",
		"git clone --upload-pack='touch x' https://h/r",
		"git clone --upload x https://h/r",
		"git fetch --upload-pack='touch x' origin",
		"git fetch --upload-pack 'touch x' origin",
		"git fetch --upl=x origin",
		"git pull --upload-pack=x origin main",
		"git ls-remote --upload-pack=x origin",
		"git ls-remote --exec=x origin",
		"git push --receive-pack='touch x' origin main",
		"git push --receive-pack x origin main",
		"git push --rec=x origin",
		"git push --exec=x origin main",
		"git archive --exec=x --remote=origin HEAD",
		// archive --remote: another repository's configuration.
		"git archive --remote=origin HEAD",
		"git archive --remote origin HEAD",
		"git archive --rem=fake HEAD",
		// rebase -x, --exec.
		"git rebase -x 'touch x' HEAD~1",
		"git rebase -x'touch x' HEAD~1",
		"git rebase -ix 'touch x' HEAD~1",
		"git rebase --exec 'touch x' HEAD~1",
		"git rebase --exec='touch x' HEAD~1",
		"git rebase --ex 'touch x' HEAD~1",
		// grep -O, --open-files-in-pager.
		"git grep -O foo",
		"git grep -O'touch x' foo",
		"git grep -iO foo",
		"git grep --open-files-in-pager=x foo",
		"git grep --open foo",
		// A strategy that is not built in runs git-merge-<name>.
		"git merge -s evil x",
		"git merge -sevil x",
		"git merge --strategy=evil x",
		"git merge --strategy evil x",
		"git merge --strat=evil x",
		"git merge -ns evil x",
		"git pull -s evil origin",
		"git rebase -s evil main",
		"git rebase --strategy=evil main",
		"git cherry-pick --strategy=evil abc",
		"git revert --strategy evil abc",
		"git merge -s",
		// Configured programs: external diff, textconv, filters, tools.
		"git log -p --ext-diff",
		"git diff --ext",
		"git show --textconv HEAD",
		"git log -p --textc",
		"git diff --textconv=x",
		"git grep --textconv foo",
		"git cat-file --filters HEAD:f",
		"git cat-file --filt HEAD:f",
		"git diff --extcmd=x",
		"git diff --tool=x",
		// A local repository or remote helper as a remote.
		"git push ./fake HEAD:refs/heads/x",
		"git push ../fake main",
		"git push /tmp/fake main",
		"git push ~/fake main",
		"git push file:///tmp/fake main",
		"git push sub/fake main",
		"git push fake main",
		"git push --repo=./fake",
		"git push --repo fake",
		"git push -u fake main",
		"git push --push-option x fake",
		"git push origin ./fake",
		"git push 'foo::bar' main",
		"git push newrepo main",
		"git init -q --bare made; git push made main",
		"git fetch upstream",
		"cd sub; git push origin main",
		"git fetch ./fake",
		"git fetch --set-upstream ../fake main",
		"git fetch fake",
		"git pull ./fake main",
		"git ls-remote /tmp/fake",
		"git clone ./fake d",
		"git clone fake d",
		"git clone /tmp/fake",
		"git clone file:///tmp/fake d",
		"git clone 'fd::0' d",
		"git clone --depth 1 ../fake d",
		"git remote add x ./fake",
		"git remote add -t main x ../fake",
		"git remote add x fake",
		"git remote set-url origin /tmp/fake",
		"git remote add x 'foo::bar'",
		// The same inside commands that run commands.
		"sh -c 'git clone -c core.sshCommand=x ssh://h/r'",
		"echo x | xargs git clone --config core.gitProxy=x",
		"timeout 5 git push ./fake main",
		// --bare names the working directory as a repository.
		"git --bare log -p",
	}
	for _, cmd := range asks {
		t.Run(cmd, func(t *testing.T) {
			p, err := bashCall(t, loc, bashInput(cmd))
			if err != nil {
				t.Fatal(err)
			}
			if v := gate.Decide(gate.Configured, p.Requests(), rules, allowEverything); !asksWhole(v, cmd) {
				t.Errorf("%s (%s), want the whole text asked; asked %+v", v.Kind, v.Reason, v.Asked)
			}
		})
	}
	allowed := []string{
		"git clone https://h/r d",
		"git clone --depth 1 https://h/r",
		"git clone -b main https://h/r",
		"git clone -o upstream https://h/r",
		"git clone git@github.com:a/b.git",
		"git clone ssh://git@h/r.git d",
		"git push",
		"git push origin main",
		"git push origin HEAD:refs/heads/x",
		"git push -u origin feature/x",
		"git push --force-with-lease origin main",
		"git fetch origin",
		"git fetch --depth 1 origin main",
		"git pull --rebase origin main",
		"git ls-remote https://h/r",
		"git remote add upstream https://h/r",
		"git remote -v",
		"git merge -s ours x",
		"git merge --strategy=ort x",
		"git merge -m fast x",
		"git merge -X theirs x",
		"git rebase -i HEAD~2",
		"git rebase --onto main x",
		"git cherry-pick -x abc",
		"git revert -s HEAD",
		"git commit -s -m 'use -x and --exec'",
		"git diff --text",
		"git diff --no-ext-diff --no-textconv",
		"git log --oneline",
		"git grep -e foo",
		"git grep -n -i foo",
		"git help -c",
		"git branch -c a b",
		"git init",
		"git init --bare x",
		"git config --get core.sshCommand",
	}
	for _, cmd := range allowed {
		t.Run(cmd, func(t *testing.T) {
			p, err := bashCall(t, loc, bashInput(cmd))
			if err != nil {
				t.Fatal(err)
			}
			if v := gate.Decide(gate.Configured, p.Requests(), rules, nil); v.Kind != gate.KindAllow {
				t.Errorf("%s (%s), want allow; requests %+v", v.Kind, v.Reason, p.Requests())
			}
		})
	}
}

// git runs what the options name, and an allowed command must not: with
// "git *": allow, clone --config core.sshCommand (or core.gitProxy) and a
// push into a bare repository the model wrote (its pre-receive hook), and
// git --bare there (its configuration's textconv, safe.bareRepository
// notwithstanding: --bare names the repository explicitly) each ran a
// command writing a marker. Each call is run when the gate allows it, as the
// engine would.
func TestBashGitOptionsDoNotRunUnasked(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is not installed: apt-get install git")
	}
	rules := disguiseRules(t)
	for _, tt := range []struct{ cmd, workdir string }{
		{cmd: "git clone --config core.sshCommand='touch MARKER #' ssh://example.invalid/r d"},
		{cmd: "git clone -c core.sshCommand='touch MARKER #' ssh://example.invalid/r d"},
		{cmd: "git clone --conf=core.gitProxy=./proxy git://example.invalid/r d"},
		{cmd: "git push ../fake HEAD:refs/heads/x", workdir: "src"},
		{cmd: "git push fake HEAD:refs/heads/x"},
		{cmd: "git --bare log -p -1", workdir: "fake"},
	} {
		t.Run(tt.cmd, func(t *testing.T) {
			loc := t.TempDir()
			gitIn := func(dir string, args ...string) {
				t.Helper()
				cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"}, args...)...)
				cmd.Dir = dir
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("git %v: %v\n%s", args, err, out)
				}
			}
			gitIn(loc, "init", "-q")
			gitIn(loc, "commit", "-q", "--allow-empty", "-m", "one")
			if err := os.MkdirAll(filepath.Join(loc, "src"), 0o700); err != nil {
				t.Fatal(err)
			}
			src := filepath.Join(loc, "src")
			gitIn(src, "init", "-q")
			for _, body := range []string{"one\n", "two\n"} {
				if err := os.WriteFile(filepath.Join(src, "f"), []byte(body), 0o600); err != nil {
					t.Fatal(err)
				}
				gitIn(src, "add", "f")
				gitIn(src, "commit", "-q", "-m", body)
			}
			gitIn(loc, "clone", "-q", "--bare", "src", "fake")
			marker := filepath.Join(loc, "marker")
			for name, body := range map[string]string{
				"hooks/pre-receive": "#!/bin/sh\ntouch " + marker + "\n",
				"config":            "[core]\n\tbare = true\n[diff \"x\"]\n\ttextconv = touch " + marker + "; cat\n",
				"info/attributes":   "* diff=x\n",
			} {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(loc, "fake", name)), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(loc, "fake", name), []byte(body), 0o700); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(loc, "proxy"), []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o700); err != nil {
				t.Fatal(err)
			}
			cmd := strings.ReplaceAll(tt.cmd, "MARKER", marker)
			p, err := bashCall(t, loc, builtin.BashInput{Command: cmd, Workdir: tt.workdir})
			if err != nil {
				t.Fatal(err)
			}
			v := gate.Decide(gate.Configured, p.Requests(), rules, nil)
			if v.Kind == gate.KindAllow {
				out := p.Run(context.Background()).Text()
				t.Errorf("allowed; it printed %q", out)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Error("the command git was given ran")
			}
		})
	}
}

// The files git writes by its arguments, in every form it reads, are
// judged as writes: outside the location, external_directory asks (and the
// ticket names the directory); a directory of patches asks with the whole
// text. Each call is run when the gate allows it, as the engine would.
func TestBashGitWritesAreJudged(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is not installed: apt-get install git")
	}
	rules := disguiseRules(t)
	for _, tt := range []struct {
		cmd   string
		whole bool
	}{
		{cmd: "git archive -oOUT/a.tar HEAD"},
		{cmd: "git archive -o OUT/a.tar HEAD"},
		{cmd: "git archive --output=OUT/a.tar HEAD"},
		{cmd: "git archive --output OUT/a.tar HEAD"},
		{cmd: "git archive --outp=OUT/a.tar HEAD"},
		{cmd: "git archive -vo OUT/a.tar HEAD"},
		{cmd: "git diff --output OUT/d HEAD~1"},
		{cmd: "git log -p --output=OUT/d"},
		{cmd: "git format-patch -oOUT -1", whole: true},
		{cmd: "git format-patch -o OUT -1", whole: true},
		{cmd: "git format-patch -ko OUT -1", whole: true},
		{cmd: "git format-patch --output-directory OUT -1", whole: true},
		{cmd: "git format-patch --output-directory=OUT -1", whole: true},
	} {
		t.Run(tt.cmd, func(t *testing.T) {
			loc, outside := t.TempDir(), t.TempDir()
			for _, args := range [][]string{{"init", "-q"}, {"commit", "-q", "--allow-empty", "-m", "one"}, {"commit", "-q", "--allow-empty", "-m", "two"}} {
				cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
				cmd.Dir = loc
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("git %v: %v\n%s", args, err, out)
				}
			}
			cmd := strings.ReplaceAll(tt.cmd, "OUT", outside)
			p, err := bashCall(t, loc, bashInput(cmd))
			if err != nil {
				t.Fatal(err)
			}
			v := gate.Decide(gate.Configured, p.Requests(), rules, nil)
			switch {
			case v.Kind == gate.KindAllow:
				out := p.Run(context.Background()).Text()
				t.Errorf("allowed; it printed %q", out)
			case tt.whole && !asksWhole(v, cmd):
				t.Errorf("%s (%s), want the whole text asked; asked %+v", v.Kind, v.Reason, v.Asked)
			case !tt.whole && !slices.ContainsFunc(v.Asked, func(r descriptor.Request) bool {
				return r.Action == "external_directory" && slices.Equal(r.Resources, []string{filepath.ToSlash(outside) + "/*"})
			}):
				t.Errorf("%s (%s), want external_directory on %s/*; asked %+v", v.Kind, v.Reason, outside, v.Asked)
			}
			if entries, _ := os.ReadDir(outside); len(entries) > 0 {
				t.Errorf("git wrote %s outside the location unasked", entries[0].Name())
			}
		})
	}
}
