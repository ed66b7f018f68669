package executor

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/stepgate/stepgate/descriptor"
)

// ResolvedPath is one path a call resolved when it was decided: the path as
// the tool passed it to [Call.Resolve], and the real path it led to then.
type ResolvedPath struct {
	Path string `json:"path"`
	Real string `json:"real"`
}

// pathBook is set in a Call while Prepare computes its requests: on a first
// decision it collects the paths the call resolves; on a call decided before
// (again, for it was recorded), it records nothing, as the check is made
// when the call runs. A Prepare runs on one goroutine; the book is dropped
// when it returns.
type pathBook struct {
	paths []ResolvedPath
	again bool
	// root and inside are the location's real path and the resource forms
	// (Path.Resource) of the paths resolved inside it, recorded on every
	// prepare, for [pathBook.withRoots].
	root   string
	inside []string
}

// record keeps the first real path seen for path, and p's resource form
// when it is inside the location.
func (b *pathBook) record(path string, p Path) {
	if !p.External {
		b.root = filepath.ToSlash(p.Root)
		if res := p.Resource(); !slices.Contains(b.inside, res) {
			b.inside = append(b.inside, res)
		}
	}
	if b.again {
		return
	}
	for _, r := range b.paths {
		if r.Path == path {
			return
		}
	}
	b.paths = append(b.paths, ResolvedPath{Path: path, Real: p.Real})
}

// withRoots sets Root (see descriptor.Request) on each request of reqs that
// names paths: one with a relative resource, every relative resource of it
// the resource form of a path the call resolved inside the location. So
// the gate matches the paths a tool touches in both their forms, whichever
// tool built the request. reqs may be shared between calls: a changed list
// is a copy.
func (b *pathBook) withRoots(reqs []descriptor.Request) []descriptor.Request {
	if b.root == "" {
		return reqs
	}
	var out []descriptor.Request
	for i, r := range reqs {
		if r.Root != "" || !b.namesPaths(r.Resources) {
			continue
		}
		if out == nil {
			out = slices.Clone(reqs)
		}
		out[i].Root = b.root
	}
	if out == nil {
		return reqs
	}
	return out
}

// namesPaths reports whether resources has a relative resource and each
// relative one is a path the call resolved inside the location.
func (b *pathBook) namesPaths(resources []string) bool {
	some := false
	for _, res := range resources {
		if res != "" && (res[0] == '/' || res[0] == '\\') {
			continue // a path outside the location, or not a path
		}
		if !slices.Contains(b.inside, res) {
			return false
		}
		some = true
	}
	return some
}

// Resolve resolves path against the call's location, as [Resolve] does, and
// holds it to the decision: while the call is first prepared (its
// permission requests computed), the real path is recorded in c.Paths; when
// it runs, a path recorded then that now resolves to another real path — a
// directory replaced by a symlink between the ticket and the approval, say —
// is ErrPathChanged, and the tool does not act on it. While a call decided
// before is prepared again nothing is recorded or checked: the check is made
// when it runs. A path not recorded (a call decided before paths were
// recorded) is not checked.
//
// Under a sandbox policy (Call.Sandbox, not Off) a real path under one of
// its Denied entries is ErrSandboxDenied; a tool that writes resolves
// through [Call.ResolveWrite], which adds the policy's write rules.
//
// Tools resolve every path they touch through Resolve, both when computing
// their requests and when they run, so the place approved is the place
// acted on.
func (c Call) Resolve(path string, wantDir bool) (Path, error) {
	return c.resolve(path, wantDir, c.checkRead)
}

// resolve is Resolve with the sandbox's check of the real path given.
func (c Call) resolve(path string, wantDir bool, check func(real string) error) (Path, error) {
	p, err := Resolve(c.Location, path, wantDir)
	if err != nil {
		return p, err
	}
	if err := check(p.Real); err != nil {
		return Path{}, err
	}
	if c.book != nil {
		c.book.record(path, p)
		return p, nil
	}
	for _, r := range c.Paths {
		if r.Path == path && r.Real != p.Real {
			return Path{}, fmt.Errorf("%w: %s", ErrPathChanged, path)
		}
	}
	return p, nil
}
