package executor

import "fmt"

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
}

// record keeps the first real path seen for path.
func (b *pathBook) record(path, real string) {
	if b.again {
		return
	}
	for _, r := range b.paths {
		if r.Path == path {
			return
		}
	}
	b.paths = append(b.paths, ResolvedPath{Path: path, Real: real})
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
// Tools resolve every path they touch through Resolve, both when computing
// their requests and when they run, so the place approved is the place
// acted on.
func (c Call) Resolve(path string, wantDir bool) (Path, error) {
	p, err := Resolve(c.Location, path, wantDir)
	if err != nil {
		return p, err
	}
	if c.book != nil {
		c.book.record(path, p.Real)
		return p, nil
	}
	for _, r := range c.Paths {
		if r.Path == path && r.Real != p.Real {
			return Path{}, fmt.Errorf("%w: %s", ErrPathChanged, path)
		}
	}
	return p, nil
}
