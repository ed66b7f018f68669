package main

import (
	"flag"
	"fmt"

	"github.com/stepgate/stepgate/config"
)

// sandboxFlag is --sandbox MODE: the host's floor, the least contained its
// runs' commands may be (the configuration may only tighten it).
type sandboxFlag struct{ mode string }

func (s *sandboxFlag) String() string { return s.mode }

func (s *sandboxFlag) Set(v string) error {
	switch v {
	case config.SandboxOff, config.SandboxWorkspaceWrite, config.SandboxReadOnly:
		s.mode = v
		return nil
	}
	return fmt.Errorf("want off, workspace-write or read-only")
}

// register adds --sandbox to fs.
func (s *sandboxFlag) register(fs *flag.FlagSet, where string) {
	fs.Var(s, "sandbox", where+"the sandbox every command of this host's runs is at least contained by: off (the host user's authority), workspace-write or read-only; the configuration's sandbox: may only tighten it (default off)")
}

// floor is the flag as a profile to tighten with.
func (s *sandboxFlag) floor() config.SandboxProfile { return config.SandboxProfile{Mode: s.mode} }
