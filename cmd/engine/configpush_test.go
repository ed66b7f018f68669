package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/step/steptest"
)

const pushGood = `agents:
  build:
    permission:
      bash: { "*": ask, "git status *": allow }
`

// engine config push refuses a file with an error whole, naming its line,
// and pushes nothing; a good file becomes version 1, which config show
// prints and config check --nats resolves.
func TestConfigPushRefusesWholeAndShows(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	url, _ := steptest.Listening(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte(pushGood+"      read: perhaps\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := engineVerb(t, "config", "push", bad, "--nats", url)
	if !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), bad+":5: agents.build.permission.read") {
		t.Fatalf("push of a bad file: %v, want its line and key", err)
	}
	if _, err := engineVerb(t, "config", "show", "--nats", url); err == nil || !strings.Contains(err.Error(), "no configuration document yet") {
		t.Fatalf("show after a refused push: %v, want no document", err)
	}

	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte(pushGood), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := engineVerb(t, "config", "push", good, "--nats", url)
	if err != nil || !strings.Contains(out, "version 1 (sha256 "+config.Digest([]byte(pushGood))+")") {
		t.Fatalf("push: %q %v", out, err)
	}
	out, err = engineVerb(t, "config", "show", "--nats", url)
	if err != nil || !strings.HasPrefix(out, "version 1\nsha256 "+config.Digest([]byte(pushGood))+"\npushed by ") || !strings.HasSuffix(out, "---\n"+pushGood) {
		t.Fatalf("show: %q %v", out, err)
	}
	out, err = engineVerb(t, "config", "check", "--nats", url, "--location", dir, "--data", t.TempDir())
	if err != nil || !strings.Contains(out, "file fleet configuration version 1") || !strings.Contains(out, `"git status *"`) {
		t.Fatalf("check --nats: %q %v", out, err)
	}
	if _, err := engineVerb(t, "config", "push", good); err == nil || !strings.Contains(err.Error(), "--nats") {
		t.Fatalf("push without --nats: %v, want a usage error naming --nats", err)
	}
}
