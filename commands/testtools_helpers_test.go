package commands_test

import (
	"testing"

	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/builtin"
)

// withTestTools is the built-in tools and the test tools (echo, echo_fx,
// wait, wait_fx, append_fx), as a host started with --test-tools installs
// them: these tests' steps call echo.
func withTestTools(t testing.TB) []*executor.Tool {
	t.Helper()
	tools, err := builtin.Tools()
	if err != nil {
		t.Fatal(err)
	}
	more, err := builtin.TestTools()
	if err != nil {
		t.Fatal(err)
	}
	return append(tools, more...)
}
