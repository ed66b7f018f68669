//go:build linux

package sandbox_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stepgate/stepgate/executor/sandbox"
)

// attackName is arg0 under which the test binary is an attack program
// (attack_test.go): the syscalls bash cannot make.
const attackName = "sandbox-attack"

func TestMain(m *testing.M) {
	sandbox.MaybeRun()
	switch filepath.Base(os.Args[0]) {
	case attackName:
		os.Exit(attack(os.Args[1:]))
	case engineName:
		os.Exit(fakeEngine(os.Args[1:]))
	}
	os.Exit(m.Run())
}
