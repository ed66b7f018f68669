package imagebuild

import (
	"debug/buildinfo"
	"fmt"
	"time"
)

// Stamp is what an engine binary's build stamp (runtime/debug's build
// information, which the go command writes into every binary) says of it:
// the image's labels and platform come from the binary itself, so they
// cannot disagree with it.
type Stamp struct {
	// Version is the module version (v1.2.3, a pseudo-version, "(devel)").
	Version string
	// Commit is vcs.revision, "" when the build recorded none; Modified is
	// vcs.modified.
	Commit   string
	Modified bool
	// Time is the commit's time (vcs.time), zero when unknown: the image's
	// creation time, so that one commit makes one image.
	Time time.Time
	// OS and Arch are GOOS and GOARCH; CGO is CGO_ENABLED.
	OS, Arch string
	CGO      bool
}

// ReadStamp reads the build stamp of the executable at path.
func ReadStamp(path string) (Stamp, error) {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return Stamp{}, fmt.Errorf("read the build stamp of %s: %w", path, err)
	}
	s := Stamp{Version: bi.Main.Version}
	for _, kv := range bi.Settings {
		switch kv.Key {
		case "vcs.revision":
			s.Commit = kv.Value
		case "vcs.modified":
			s.Modified = kv.Value == "true"
		case "vcs.time":
			if t, err := time.Parse(time.RFC3339, kv.Value); err == nil {
				s.Time = t.UTC()
			}
		case "GOOS":
			s.OS = kv.Value
		case "GOARCH":
			s.Arch = kv.Value
		case "CGO_ENABLED":
			s.CGO = kv.Value == "1"
		}
	}
	return s, nil
}

// check refuses a binary the image cannot run: not for linux, or linked
// against the C library (the image holds no libc).
func (s Stamp) check() error {
	if s.OS != "linux" {
		return fmt.Errorf("%w: built for %q, not linux", ErrNotStatic, s.OS)
	}
	if s.CGO {
		return fmt.Errorf("%w: built with CGO_ENABLED=1 (build with CGO_ENABLED=0, as scripts/release does)", ErrNotStatic)
	}
	if s.Arch == "" {
		return fmt.Errorf("%w: the build stamp names no GOARCH", ErrNotStatic)
	}
	return nil
}

// revision is the commit as the label gives it: "+dirty" for a tree with
// changes, "unknown" when the build recorded none.
func (s Stamp) revision() string {
	switch {
	case s.Commit == "":
		return "unknown"
	case s.Modified:
		return s.Commit + "+dirty"
	}
	return s.Commit
}
