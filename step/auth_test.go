package step_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stepgate/stepgate/step"
)

func writeConf(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "access.conf")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func startAuth(t *testing.T, file string) (*step.Embedded, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := step.StartEmbedded(ctx, step.EmbeddedConfig{Dir: t.TempDir(), Listen: "127.0.0.1:0", AuthFile: file})
	if err == nil {
		t.Cleanup(e.Shutdown)
	}
	return e, err
}

// An access file's users are enforced: a connection without credentials,
// or with a wrong password, is refused; the user's own is accepted.
func TestEmbeddedAuthFileEnforced(t *testing.T) {
	t.Setenv("STEPGATE_TEST_PASSWORD", "s3cret")
	e, err := startAuth(t, writeConf(t, `authorization { users = [{user: a, password: $STEPGATE_TEST_PASSWORD}] }`))
	if err != nil {
		t.Fatal(err)
	}
	for _, opt := range []nats.Option{nats.Name("anonymous"), nats.UserInfo("a", "wrong")} {
		nc, err := nats.Connect(e.ClientURL(), opt)
		if err == nil {
			nc.Close()
			t.Fatal("connected without the user's password")
		}
		if !errors.Is(err, nats.ErrAuthorization) {
			t.Fatalf("refused with %v, want an authorization violation", err)
		}
	}
	nc, err := nats.Connect(e.ClientURL(), nats.UserInfo("a", "s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
}

// An access file that cannot be read, names an unset variable, or names
// no one is refused: the server never starts open.
func TestEmbeddedAuthFileRefused(t *testing.T) {
	for name, c := range map[string]struct{ file, want string }{
		"missing":  {filepath.Join(t.TempDir(), "none.conf"), "access file"},
		"unset":    {writeConf(t, `authorization { users = [{user: a, password: $STEPGATE_UNSET_PASSWORD}] }`), "STEPGATE_UNSET_PASSWORD"},
		"no users": {writeConf(t, `port: 4222`), "no users"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := startAuth(t, c.file)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one naming %q", err, c.want)
			}
		})
	}
}
