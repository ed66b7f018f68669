package config_test

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/gate"
)

const fleetFile = `agents:
  build:
    permission:
      bash: { "*": ask, "git status *": allow }
`

// A user file with an error anywhere is refused whole by config push, the
// error naming the file, its line and key, as a host reading it would.
func TestNewFleetDocRefusesWhole(t *testing.T) {
	at := time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		why, text, want string
	}{
		{"an unknown key after good rules", fleetFile + "tool_outptu: { max_lines: 10 }\n", "fleet.yaml:5: tool_outptu: unknown key"},
		{"a bad effect in the second agent", fleetFile + "  plan:\n    permission:\n      read: maybe\n", "fleet.yaml:7: agents.plan.permission.read"},
		{"a syntax error on the last line", fleetFile + "notify: [\n", "fleet.yaml:"},
		{"more than MaxFileBytes", fleetFile + "#" + strings.Repeat("x", config.MaxFileBytes) + "\n", "bytes a configuration file may hold"},
	} {
		d, err := config.NewFleetDoc("fleet.yaml", []byte(tc.text), "ops", at)
		if err == nil || d != nil {
			t.Errorf("%s: got a document, want it refused", tc.why)
			continue
		}
		if !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrInvalid with %q", tc.why, err, tc.want)
		}
	}
}

// A pushed document reads back as it was written, with the version the
// bucket gives it, and is the user's layer of a loader that has it.
func TestFleetDocRoundTrip(t *testing.T) {
	at := time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)
	d, err := config.NewFleetDoc("fleet.yaml", []byte(fleetFile), "ops@vm", at)
	if err != nil {
		t.Fatal(err)
	}
	b, err := d.Encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := config.DecodeFleetDoc(b, 7)
	if err != nil {
		t.Fatal(err)
	}
	want := *d
	want.Version = 7
	if diff := cmp.Diff(&want, got); diff != "" {
		t.Fatalf("decoded (-want +got):\n%s", diff)
	}
	dir := t.TempDir()
	l := config.Loader{UserFile: filepath.Join(dir, "no-such-file.yaml"), Fleet: got}
	eff, err := l.Effective("build", dir)
	if err != nil {
		t.Fatal(err)
	}
	if d := gate.Evaluate("bash", "touch pwned", eff.Rules); d.Effect != gate.Ask || d.Rule == nil || d.Rule.Source != gate.SourceUser {
		t.Errorf("bash touch pwned under the fleet's document: %+v, want ask by the user's layer", d)
	}
	if !strings.Contains(strings.Join(eff.Files, " "), "fleet configuration version 7") {
		t.Errorf("layers %v do not name the fleet's document", eff.Files)
	}
}

// What is in the bucket is untrusted: every way a stored document can be
// wrong is refused as ErrBadFleetDoc.
func TestDecodeFleetDocRefuses(t *testing.T) {
	good := func(mod func(m map[string]any)) []byte {
		m := map[string]any{"v": 1, "sha256": config.Digest([]byte(fleetFile)), "pushed_by": "ops", "pushed_at": "2026-12-02T01:00:00Z", "content": []byte(fleetFile)}
		mod(m)
		b, _ := json.Marshal(m)
		return b
	}
	bad := "agents: { build: { permission: { bash: perhaps } } }\n"
	for _, tc := range []struct {
		why  string
		data []byte
	}{
		{"not JSON", []byte("agents: {}")},
		{"format 2", good(func(m map[string]any) { m["v"] = 2 })},
		{"an unknown field", good(func(m map[string]any) { m["trusted"] = true })},
		{"a digest that is not the content's", good(func(m map[string]any) { m["content"] = []byte(fleetFile + "# more\n") })},
		{"content that is not a valid user file", good(func(m map[string]any) {
			m["content"], m["sha256"] = []byte(bad), config.Digest([]byte(bad))
		})},
		{"two JSON values", append(good(func(map[string]any) {}), []byte(" {}")...)},
		{"too large", []byte(`{"v":1,"content":"` + strings.Repeat("A", 2*config.MaxFileBytes) + `"}`)},
	} {
		if d, err := config.DecodeFleetDoc(tc.data, 3); !errors.Is(err, config.ErrBadFleetDoc) || d != nil {
			t.Errorf("%s: %v, %v; want ErrBadFleetDoc", tc.why, d, err)
		}
	}
}
