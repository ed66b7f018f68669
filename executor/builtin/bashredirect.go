package builtin

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
)

// streamDevice matches the files a write to which needs no permission: the
// null device and the process's own streams.
var streamDevice = regexp.MustCompile(`^/dev/(null|stdout|stderr|stdin|fd/[0-9]+)$`)

// bashRequests are a bash call's permission requests, after the workdir's:
//   - bash, one resource per simple command (inner commands of commands
//     that run commands included), each saved by its exact text;
//   - per file the command writes (output redirections, find -fprint, time
//     -o, git --output): the edit request the write tool makes for it —
//     external_directory on <dir>/* outside the location, then edit on the
//     path (relative to the location inside it), saved as "*";
//   - when the parser cannot model the command exactly, bash on the whole
//     text, always asking (Ask), so a human sees all of it.
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
		w, ok := writeRequests(c, dir, target, a.changesDir)
		if !ok {
			asks = true
			continue
		}
		for _, r := range w {
			if !slices.ContainsFunc(reqs, func(q descriptor.Request) bool {
				return q.Action == r.Action && slices.Equal(q.Resources, r.Resources)
			}) {
				reqs = append(reqs, r)
			}
		}
	}
	if asks {
		reqs = append(reqs, askWhole)
	}
	return reqs
}

// writeRequests are what writing target, as the command names it, asks:
// exactly the write tool's requests for the path, a relative target
// resolved against the working directory. The null device and the
// process's own streams ask nothing. It returns false when the target
// cannot be judged: a relative target after a cd, or a path that does not
// resolve (it then asks with the whole text).
func writeRequests(c executor.Call, dir executor.Path, target string, changesDir bool) ([]descriptor.Request, bool) {
	if target == "" {
		return nil, false
	}
	if streamDevice.MatchString(filepath.Clean(target)) {
		return nil, true
	}
	abs := target
	if !filepath.IsAbs(target) {
		if changesDir {
			return nil, false
		}
		abs = filepath.Join(dir.Real, target)
	}
	reqs, err := editRequests(c, abs)
	if err != nil {
		return nil, false
	}
	return reqs, true
}
