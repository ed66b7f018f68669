package executor

import (
	"errors"
	"path/filepath"

	"github.com/stepgate/stepgate/executor/sandbox"
)

// ErrSandboxDenied: the call's sandbox policy refuses what a file tool was
// about to read or write (a denied path, a read-only path, a write outside
// the writable roots). Its text is the code; the message that follows it
// names the path and the policy's entry that refused it (see
// [DeniedError], which matches it).
var ErrSandboxDenied = errors.New("sandbox_denied")

// One policy for every effect: the engine's own file tools obey the paths
// of the call's sandbox policy as the sandbox's processes do, so no tool is
// a way around it. Tools resolve every path through Call.Resolve (reads)
// or Call.ResolveWrite (writes); both hold the real path to the policy
// here, and the searches skip what [Call.Hidden] says.
//
// The private temporary directory of the sandbox does not exist for the
// file tools: under workspace-write a write to os.TempDir() is outside the
// writable roots, refused unless the policy lists it in Writable.

// fileSandbox returns the call's policy when it contains file tools: set
// and not Off.
func (c Call) fileSandbox() *sandbox.Policy {
	if c.Sandbox == nil || c.Sandbox.Mode == sandbox.Off || c.Sandbox.Mode == "" {
		return nil
	}
	return c.Sandbox
}

// Hidden reports whether the call's sandbox denies reading the real path
// real: under a Denied entry. A search (glob, grep) neither lists nor reads
// such a path, nor walks into it. Always false without a policy.
func (c Call) Hidden(real string) bool {
	pol := c.fileSandbox()
	return pol != nil && deniedBy(pol.Denied, pol.Location, real) != ""
}

// checkRead refuses reading real when it is under a Denied entry.
func (c Call) checkRead(real string) error {
	pol := c.fileSandbox()
	if pol == nil {
		return nil
	}
	if e := deniedBy(pol.Denied, pol.Location, real); e != "" {
		return &DeniedError{Path: real, Why: "denied path " + e}
	}
	return nil
}

// checkWrite refuses writing real: under a Denied or a ReadOnly entry, any
// write under the read-only profile, and under workspace-write a write
// outside the location and the Writable roots.
func (c Call) checkWrite(real string) error {
	pol := c.fileSandbox()
	if pol == nil {
		return nil
	}
	if e := deniedBy(pol.Denied, pol.Location, real); e != "" {
		return &DeniedError{Write: true, Path: real, Why: "denied path " + e}
	}
	if e := deniedBy(pol.ReadOnly, pol.Location, real); e != "" {
		return &DeniedError{Write: true, Path: real, Why: "read-only path " + e}
	}
	switch pol.Mode {
	case sandbox.WorkspaceWrite:
		roots := append([]string{pol.Location}, pol.Writable...)
		if deniedBy(roots, pol.Location, real) == "" {
			return &DeniedError{Write: true, Path: real, Why: "outside the location and the writable roots"}
		}
		return nil
	default: // read-only, or a mode this engine does not know: fail closed
		return &DeniedError{Write: true, Path: real, Why: "profile " + string(pol.Mode)}
	}
}

// ResolveWrite is [Call.Resolve] for a path the tool writes (creates,
// replaces, edits, deletes): the real path is held to the sandbox's write
// rules (see checkWrite), which deny all a read is denied and more.
func (c Call) ResolveWrite(path string, wantDir bool) (Path, error) {
	return c.resolve(path, wantDir, c.checkWrite)
}

// deniedBy returns the first of entries that real is under (the entry
// itself or below it), as the entry is written; "" when none. An entry is
// compared both as written (cleaned, made absolute against location) and
// as its real path, after symlinks of its existing part: a denied ~/.ssh
// that is a symlink denies what it points to too.
func deniedBy(entries []string, location, real string) string {
	for _, e := range entries {
		if e == "" {
			continue
		}
		abs := e
		if !filepath.IsAbs(abs) {
			if location == "" {
				continue
			}
			abs = filepath.Join(location, abs)
		}
		abs = filepath.Clean(abs)
		if under(real, abs) {
			return e
		}
		if r, _, err := realPath(abs); err == nil && r != abs && under(real, r) {
			return e
		}
	}
	return ""
}

// under reports whether the absolute path p is entry or below it, both
// cleaned: /a/b is under /a/b and /a, not under /a/bc.
func under(p, entry string) bool {
	p, entry = filepath.Clean(p), filepath.Clean(entry)
	if p == entry {
		return true
	}
	if entry == string(filepath.Separator) {
		return filepath.IsAbs(p)
	}
	return len(p) > len(entry) && p[:len(entry)] == entry && p[len(entry)] == filepath.Separator
}
