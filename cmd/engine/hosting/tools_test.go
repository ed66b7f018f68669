package hosting

import (
	"os"
	"path/filepath"
	"testing"
)

// websearch is in the catalogue only when the user file names an endpoint;
// a bad endpoint stops the host from starting rather than being dropped.
func TestWebsearchInstalledOnlyWithAnEndpoint(t *testing.T) {
	dir := t.TempDir()
	user := filepath.Join(dir, "config.yaml")
	has := func(userFile string) bool {
		t.Helper()
		reg, err := tools(false, userFile)
		if err != nil {
			t.Fatal(err)
		}
		_, ok := reg.Lookup("websearch")
		return ok
	}
	if has(user) {
		t.Error("websearch installed with no configuration file")
	}
	if err := os.WriteFile(user, []byte("tool_output: { max_lines: 100 }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if has(user) {
		t.Error("websearch installed with no endpoint configured")
	}
	if err := os.WriteFile(user, []byte("websearch: { endpoint: \"http://127.0.0.1:9/search\" }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if !has(user) {
		t.Error("websearch missing with an endpoint configured")
	}
	if err := os.WriteFile(user, []byte("websearch: { endpoint: \"file:///x\" }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := tools(false, user); err == nil {
		t.Error("a file: endpoint was accepted")
	}
}
