package integration

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// shippedUnit is deploy/systemd/stepgate.service with its ExecStart binary
// (/usr/local/bin/engine, which systemd-analyze verify requires to exist)
// replaced by this test's engine binary, written into a fresh directory.
func shippedUnit(t *testing.T, edit func(string) string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "deploy", "systemd", "stepgate.service"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if !strings.Contains(text, "ExecStart=/usr/local/bin/engine serve ") {
		t.Fatal("the unit's ExecStart no longer starts /usr/local/bin/engine serve")
	}
	text = strings.Replace(text, "ExecStart=/usr/local/bin/engine ", "ExecStart="+engineBin+" ", 1)
	p := filepath.Join(t.TempDir(), "stepgate.service")
	if err := os.WriteFile(p, []byte(edit(text)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// verifyUnit runs systemd-analyze verify on the unit at p and returns
// whether it passed without a word about the unit (an unknown or
// misspelt directive is only a warning, exit status 0).
func verifyUnit(t *testing.T, p string) (bool, string) {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command("systemd-analyze", "verify", p)
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if _, missing := err.(*exec.Error); missing {
		t.Fatalf("systemd-analyze: %v (the unit's test needs systemd's tools)", err)
	}
	return err == nil && !strings.Contains(out.String(), filepath.Base(p)), out.String()
}

// The systemd unit passes systemd-analyze verify with nothing to say, and
// its hardening keeps systemd-analyze security's exposure at 3.0 or below
// ("OK"). Positive controls: the same check fails a unit with a misspelt
// directive and one whose binary is missing.
func TestSystemdUnitVerifies(t *testing.T) {
	ok, out := verifyUnit(t, shippedUnit(t, func(s string) string { return s }))
	if !ok {
		t.Fatalf("systemd-analyze verify of deploy/systemd/stepgate.service:\n%s", out)
	}
	sec := exec.Command("systemd-analyze", "security", "--offline=true", "--threshold=30", shippedUnit(t, func(s string) string { return s }))
	if b, err := sec.CombinedOutput(); err != nil {
		t.Errorf("systemd-analyze security: exposure above 3.0 (%v):\n%s", err, b)
	}
	if ok, _ := verifyUnit(t, shippedUnit(t, func(s string) string { return strings.Replace(s, "ProtectClock=", "ProtectClok=", 1) })); ok {
		t.Error("verify passed a unit with a misspelt directive")
	}
	if ok, _ := verifyUnit(t, shippedUnit(t, func(s string) string { return strings.Replace(s, engineBin, engineBin+"-missing", 1) })); ok {
		t.Error("verify passed a unit whose binary is missing")
	}
}

// The example user file is one engine config check accepts, read where
// the engine reads the user's file ($XDG_CONFIG_HOME/stepgate/config.yaml,
// /etc/stepgate/config.yaml under the unit), with its rules named as the
// user's.
func TestDeployExampleConfigChecks(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "deploy", "example", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	xdg := t.TempDir()
	if err := os.MkdirAll(filepath.Join(xdg, "stepgate"), 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(xdg, "stepgate", "config.yaml")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, agent := range []string{"build", "reviewer"} {
		cmd := exec.Command(engineBin, "config", "check", "--location", t.TempDir(), "--agent", agent)
		cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+xdg)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("engine config check --agent %s of deploy/example/config.yaml: %v\n%s", agent, err, out)
		}
		for _, want := range []string{"file " + file, "user config"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("engine config check --agent %s lacks %q:\n%s", agent, want, out)
			}
		}
	}
}
