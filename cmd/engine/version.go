package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// buildStamp is what the binary knows of its own build, all of it from
// runtime/debug.ReadBuildInfo, which the go command fills in: the module
// version (v1.2.3 for `go install …@v1.2.3`; from Go 1.24 a build in a git
// checkout gets the tag or a pseudo-version, "+dirty" with uncommitted
// changes; "(devel)" without version control), the commit and whether the
// tree had changes (vcs.revision, vcs.modified), the commit's time and the
// Go version. Nothing is set at link time (no -ldflags -X): the go command's
// stamp cannot disagree with the source it built, and the binary keeps no
// package-level variable.
type buildStamp struct {
	Module   string `json:"module"`
	Version  string `json:"version"`
	Commit   string `json:"commit,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Time     string `json:"commit_time,omitempty"`
	Go       string `json:"go"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
}

// readBuildStamp returns the stamp of the running binary.
func readBuildStamp() buildStamp {
	s := buildStamp{Version: "(devel)", Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return s
	}
	s.Module = bi.Main.Path
	if bi.Main.Version != "" {
		s.Version = bi.Main.Version
	}
	if bi.GoVersion != "" {
		s.Go = bi.GoVersion
	}
	for _, kv := range bi.Settings {
		switch kv.Key {
		case "vcs.revision":
			s.Commit = kv.Value
		case "vcs.modified":
			s.Modified = kv.Value == "true"
		case "vcs.time":
			s.Time = kv.Value
		}
	}
	return s
}

// commitText is the commit as printed: "+dirty" when the tree had changes,
// "unknown" when the build recorded none (go test, -buildvcs=false, a
// build outside a checkout).
func (s buildStamp) commitText() string {
	if s.Commit == "" {
		return "unknown"
	}
	if s.Modified {
		return s.Commit + "+dirty"
	}
	return s.Commit
}

// runVersion is `engine version`: the module version, the commit and the
// Go version of this binary (--json: as one object).
func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("version", stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{"version takes no arguments"}
	}
	s := readBuildStamp()
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(s)
	}
	fmt.Fprintf(stdout, "engine %s\n", s.Version)
	fmt.Fprintf(stdout, "commit  %s\n", s.commitText())
	if s.Time != "" {
		fmt.Fprintf(stdout, "date    %s\n", s.Time)
	}
	fmt.Fprintf(stdout, "go      %s %s/%s\n", s.Go, s.OS, s.Arch)
	return nil
}
