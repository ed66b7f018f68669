package builtin

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
)

// streamDevice matches the names of the process's own streams, a write to
// which needs no permission unless the command redirected input from a
// file (see writeRequests).
var streamDevice = regexp.MustCompile(`^/dev/(stdout|stderr|stdin|fd/[0-9]+)$`)

// bashRequests are a bash call's permission requests, after the workdir's:
//   - bash, one resource per simple command (inner commands of commands
//     that run commands included), each saved by its exact text;
//   - per file the command writes (output redirections, find -fprint, time
//     -o, git --output): the edit request the write tool makes for it —
//     external_directory on <dir>/* outside the location, then edit on the
//     path (relative to the location inside it), saved as "*";
//   - when the parser cannot model the command exactly, a write target
//     cannot be judged (writeRequests), or a git command names as its
//     repository a bare word that is no configured remote: bash on the
//     whole text, always asking (Ask), so a human sees all of it.
//
// A command that does not parse is one bash request on its whole text,
// always asking.
func bashRequests(c executor.Call, command string, dir executor.Path) []descriptor.Request {
	whole := strings.TrimSpace(command)
	askWhole := descriptor.Request{Action: "bash", Resources: []string{whole}, Save: []string{whole}, Ask: true}
	reqs := dir.Requests()
	a := analyzeBash(command)
	if !a.parsed {
		return append(reqs, askWhole)
	}
	var cmds []string
	for _, c := range a.cmds {
		if !slices.Contains(cmds, c.text) {
			cmds = append(cmds, c.text)
		}
	}
	if len(cmds) == 0 {
		cmds = []string{whole} // only comments, or compound syntax without a command in it
	}
	reqs = append(reqs, descriptor.Request{Action: "bash", Resources: cmds, Save: cmds})
	asks := len(a.asks) > 0
	for _, target := range a.writes {
		w, ok := writeRequests(c, dir, target, a)
		asks = asks || !ok
		for _, r := range w {
			if !slices.ContainsFunc(reqs, func(q descriptor.Request) bool {
				return q.Action == r.Action && slices.Equal(q.Resources, r.Resources)
			}) {
				reqs = append(reqs, r)
			}
		}
	}
	for _, w := range a.gitRepos {
		if a.changesDir || !gitRemoteConfigured(dir.Real, w) {
			asks = true // a path to a repository, not a remote's name
		}
	}
	if asks {
		reqs = append(reqs, askWhole)
	}
	return reqs
}

// writeRequests are what writing target, as the command names it, asks:
// exactly the write tool's requests for the path, a relative target
// resolved against the working directory. It returns false when the target
// cannot be judged (the whole text then asks), with the requests of what
// can be:
//   - /dev/null asks nothing; nor do the standard streams' names
//     (/dev/stdout, /dev/fd/N, …) unless the text redirects input from a
//     file (readsFile), which such a name would reopen for writing;
//   - a relative target after a cd cannot be judged;
//   - nor can one with ".." after a name: bash climbs from where a
//     symlink there led, not from the name;
//   - /proc/self/cwd/P and /proc/thread-self/cwd/P are P in bash's own
//     working directory, the workdir, and are judged so as well (a deny
//     of P denies), but still cannot be judged exactly (the command may
//     change its directory in a subshell);
//   - any other path through /proc, /dev/fd or a standard stream's name,
//     lexically or by a symlink (executor.ErrProcessPath), cannot be
//     judged: it names a file as the process that opens it sees it, never
//     as the engine would resolve it;
//   - nor can a path that does not resolve.
func writeRequests(c executor.Call, dir executor.Path, target string, a *shellAnalysis) ([]descriptor.Request, bool) {
	if target == "" {
		return nil, false
	}
	clean := filepath.Clean(target)
	if clean == "/dev/null" {
		return nil, true
	}
	if streamDevice.MatchString(clean) {
		return nil, !a.readsFile
	}
	if !filepath.IsAbs(target) && a.changesDir {
		return nil, false
	}
	if climbsAfterName(target) {
		return nil, false
	}
	if rest, ok := ownCwd(clean); ok {
		if a.changesDir {
			return nil, false
		}
		reqs, err := editRequests(c, filepath.Join(dir.Real, rest))
		if err != nil {
			return nil, false
		}
		return reqs, false
	}
	if executor.IsProcessPath(clean) {
		return nil, false
	}
	abs := target
	if !filepath.IsAbs(target) {
		abs = filepath.Join(dir.Real, target)
	}
	reqs, err := editRequests(c, abs)
	if err != nil {
		return nil, false
	}
	return reqs, true
}

// climbsAfterName reports a ".." component after a name in p (a leading
// "../" climbs from the working directory, a real path, and is exact).
func climbsAfterName(p string) bool {
	named := false
	for _, c := range strings.Split(p, "/") {
		switch c {
		case "", ".":
		case "..":
			if named {
				return true
			}
		default:
			named = true
		}
	}
	return false
}

// ownCwd returns the rest of p, a clean path, below /proc/self/cwd or
// /proc/thread-self/cwd: the opening process's working directory.
func ownCwd(p string) (string, bool) {
	for _, prefix := range []string{"/proc/self/cwd", "/proc/thread-self/cwd"} {
		if p == prefix {
			return ".", true
		}
		if rest, ok := strings.CutPrefix(p, prefix+"/"); ok {
			return rest, true
		}
	}
	return "", false
}
