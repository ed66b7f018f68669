package config_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/config"
)

// SecretRefs finds each secret://NAME, the name ending at the first byte
// that cannot be in it, and refuses a prefix without a name.
func TestSecretRefs(t *testing.T) {
	tests := []struct {
		why, in string
		want    []string
		err     bool
	}{
		{"none", "Bearer abc", nil, false},
		{"one in a header", "Bearer secret://TOKEN", []string{"TOKEN"}, false},
		{"two, ended by punctuation", "secret://A_1:secret://_b.", []string{"A_1", "_b"}, false},
		{"a prefix without a name", "secret://", nil, true},
		{"a name starting with a digit", "x secret://1A", nil, true},
		{"case-sensitive prefix", "SECRET://A", nil, false},
		{"a second prefix without a name", "secret://A secret://-", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.why, func(t *testing.T) {
			refs, err := config.SecretRefs(tt.in)
			if (err != nil) != tt.err {
				t.Fatalf("SecretRefs(%q) error %v, want error %v", tt.in, err, tt.err)
			}
			var names []string
			for _, r := range refs {
				names = append(names, r.Name)
				if tt.in[r.Start:r.End] != r.String() {
					t.Errorf("ref %+v spans %q", r, tt.in[r.Start:r.End])
				}
			}
			if d := cmp.Diff(tt.want, names); d != "" {
				t.Errorf("names (-want +got):\n%s", d)
			}
		})
	}
}

// writeSecrets writes a secrets file with mode perm.
func writeSecrets(t *testing.T, text string, perm os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "secrets.yaml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, perm); err != nil {
		t.Fatal(err)
	}
	return p
}

// Resolve reads the environment first, then the secrets file; a missing
// secret, a readable-by-others file or a malformed one is an error naming
// the reference, never the value.
func TestSecretsResolve(t *testing.T) {
	ctx := context.Background()
	t.Setenv("SG_TEST_ENV_SECRET", "env-plaintext-1")
	file := writeSecrets(t, "SG_FILE_SECRET: file-plaintext-2\nSG_TEST_ENV_SECRET: shadowed\n", 0o600)
	s := &config.Secrets{File: file}
	got, err := s.Resolve(ctx, "a=secret://SG_TEST_ENV_SECRET b=secret://SG_FILE_SECRET.")
	if err != nil || got != "a=env-plaintext-1 b=file-plaintext-2." {
		t.Fatalf("Resolve = %q, %v", got, err)
	}
	if got, err := s.Resolve(ctx, "plain"); err != nil || got != "plain" {
		t.Fatalf("Resolve of a plain value = %q, %v", got, err)
	}
	failures := []struct {
		why  string
		s    *config.Secrets
		in   string
		want string
	}{
		{"not set, no file", &config.Secrets{}, "secret://SG_MISSING", "secret://SG_MISSING: not set: no environment variable SG_MISSING and no secrets_file"},
		{"not in the file", s, "x secret://SG_MISSING", "secret://SG_MISSING: not set: no environment variable SG_MISSING and no SG_MISSING in secrets file " + file},
		{"a file others may read", &config.Secrets{File: writeSecrets(t, "SG_FILE_SECRET: file-plaintext-2\n", 0o640)}, "secret://SG_FILE_SECRET", "may be read by its group or others (mode 0640)"},
		{"a malformed file", &config.Secrets{File: writeSecrets(t, "SG_FILE_SECRET: [file-plaintext-2\n", 0o600)}, "secret://SG_FILE_SECRET", "not valid YAML or JSON"},
		{"a file not a mapping", &config.Secrets{File: writeSecrets(t, "- file-plaintext-2\n", 0o600)}, "secret://SG_FILE_SECRET", "line 1: want a mapping"},
		{"a value not plain", &config.Secrets{File: writeSecrets(t, "SG_FILE_SECRET: {a: file-plaintext-2}\n", 0o600)}, "secret://SG_FILE_SECRET", "line 1: want a name and a plain value"},
		{"a missing file", &config.Secrets{File: filepath.Join(t.TempDir(), "none")}, "secret://SG_FILE_SECRET", "secret://SG_FILE_SECRET: secrets file: open"},
		{"a prefix without a name", s, "secret://", "secret://: secret:// at byte 0"},
	}
	for _, tt := range failures {
		t.Run(tt.why, func(t *testing.T) {
			_, err := tt.s.Resolve(ctx, tt.in)
			var se *config.SecretError
			if err == nil || !errors.Is(err, config.ErrSecret) || !errors.As(err, &se) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Resolve = %v, want a SecretError saying %q", err, tt.want)
			}
			assertNoPlaintext(t, err.Error())
		})
	}
}

// plaintexts are the secrets the tests resolve; no output may hold one.
var plaintexts = []string{"env-plaintext-1", "file-plaintext-2", "header-plaintext-3"}

func assertNoPlaintext(t *testing.T, out string) {
	t.Helper()
	for _, p := range plaintexts {
		if strings.Contains(out, p) {
			t.Errorf("output holds the secret %q:\n%s", p, out)
		}
	}
}

// A resolved server hands its secrets to the connection through Env and
// Headers, and every way of printing it — fmt's verbs, slog's handlers,
// JSON, its errors — shows the references, never a plaintext.
func TestResolvedServerRedacts(t *testing.T) {
	ctx := context.Background()
	t.Setenv("SG_TEST_ENV_SECRET", "env-plaintext-1")
	t.Setenv("SG_TEST_HEADER", "header-plaintext-3")
	dir := t.TempDir()
	secrets := writeSecrets(t, "SG_FILE_SECRET: file-plaintext-2\n", 0o600)
	user := filepath.Join(dir, "user.yaml")
	text := fmt.Sprintf("secrets_file: %s\nmcp:\n  st: {command: [srv], env: {A: \"secret://SG_TEST_ENV_SECRET\", B: \"x-secret://SG_FILE_SECRET\"}}\n"+
		"  ht: {url: \"https://127.0.0.1:9/mcp\", headers: {Authorization: \"Bearer secret://SG_TEST_HEADER\"}}\n"+
		"  bad: {url: \"https://127.0.0.1:9/mcp\", headers: {Authorization: \"Bearer secret://SG_TEST_HEADER secret://SG_NOPE\"}}\n", secrets)
	if err := os.WriteFile(user, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	l := config.Loader{UserFile: user}
	srvs, err := l.MCPServers(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := l.Secrets()
	if err != nil || s.File != secrets {
		t.Fatalf("Secrets = %+v, %v; want the file %s", s, err, secrets)
	}
	byName := map[string]config.MCPServer{}
	for _, srv := range srvs {
		byName[srv.Name] = srv
	}
	st, err := s.ResolveServer(ctx, byName["st"])
	if err != nil {
		t.Fatal(err)
	}
	ht, err := s.ResolveServer(ctx, byName["ht"])
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[string]string{"A": "env-plaintext-1", "B": "x-file-plaintext-2"}, st.Env()); d != "" {
		t.Errorf("env (-want +got):\n%s", d)
	}
	if got := ht.Headers()["Authorization"]; got != "Bearer header-plaintext-3" {
		t.Errorf("header %q", got)
	}
	if d := cmp.Diff([]string{"env-plaintext-1", "file-plaintext-2", "x-file-plaintext-2"}, st.Secrets()); d != "" {
		t.Errorf("the stdio server's secrets, what its redactor removes (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"header-plaintext-3", "Bearer header-plaintext-3"}, ht.Secrets()); d != "" {
		t.Errorf("the HTTP server's secrets (-want +got):\n%s", d)
	}
	if byName["st"].Env["A"] != "secret://SG_TEST_ENV_SECRET" {
		t.Errorf("resolving changed the configured server: %v", byName["st"].Env)
	}
	_, badErr := s.ResolveServer(ctx, byName["bad"])
	if badErr == nil || !strings.Contains(badErr.Error(), "MCP server bad: headers Authorization: secret://SG_NOPE: not set") {
		t.Fatalf("ResolveServer of a missing secret = %v", badErr)
	}

	var out bytes.Buffer
	for _, r := range []config.ResolvedServer{st, ht} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%d", "%x"} {
			fmt.Fprintf(&out, verb+"\n", r)
			fmt.Fprintf(&out, verb+"\n", &r)
			fmt.Fprintf(&out, verb+"\n", []config.ResolvedServer{r})
			fmt.Fprintf(&out, verb+"\n", struct{ R config.ResolvedServer }{r})
		}
		out.WriteString(r.String() + "\n")
		js, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(js)
		slog.New(slog.NewTextHandler(&out, nil)).Info("connect", "server", r)
		slog.New(slog.NewJSONHandler(&out, nil)).Info("connect", "server", r, "ptr", &r)
	}
	fmt.Fprintf(&out, "%v %+v\n", badErr, badErr)
	assertNoPlaintext(t, out.String())
	for _, want := range []string{"secret://SG_TEST_ENV_SECRET", "secret://SG_TEST_HEADER", "mcp server st (stdio: srv)", `"url":"https://127.0.0.1:9/mcp"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// secrets_file is relative to the user's file; a directory is refused;
// without a user's file only the environment is read.
func TestSecretsFileOfTheUsersFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	user := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(user, []byte("secrets_file: secrets.json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "secrets.json"), []byte(`{"SG_REL": "file-plaintext-2"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := config.Loader{UserFile: user}.Secrets()
	if err != nil || s.File != filepath.Join(dir, "secrets.json") {
		t.Fatalf("Secrets = %+v, %v", s, err)
	}
	if v, err := s.Resolve(ctx, "secret://SG_REL"); err != nil || v != "file-plaintext-2" {
		t.Errorf("Resolve = %q, %v", v, err)
	}
	_, err = (&config.Secrets{File: dir}).Resolve(ctx, "secret://SG_REL")
	if err == nil || !strings.Contains(err.Error(), "a directory, not a regular file") {
		t.Errorf("a directory as the secrets file: %v", err)
	}
	s, err = config.Loader{}.Secrets()
	if err != nil || s.File != "" {
		t.Errorf("no user's file: %+v, %v", s, err)
	}
}
