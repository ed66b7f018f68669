package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/gate"
)

// The notify section in the user's file decodes to its webhooks, in file
// order, with the secret as written (unresolved) and where each is.
func TestNotifyDecode(t *testing.T) {
	text := "notify:\n" +
		"  - url: https://hooks.example/stepgate\n" +
		"    secret: secret://HOOK_KEY\n" +
		"    events: [ticket_issued, run_ended]\n" +
		"  - {url: \"http://127.0.0.1:9000/in\", secret: s3cr3t, events: [ticket_resolved], include_args: true}\n" +
		"---\n" +
		"notify:\n" +
		"  - {url: \"http://127.0.0.1:9001/\", secret: k, events: [ticket_issued]}\n"
	f, err := config.Parse("u.yaml", []byte(text), gate.SourceUser)
	if err != nil {
		t.Fatal(err)
	}
	want := []config.Webhook{
		{URL: "https://hooks.example/stepgate", Secret: "secret://HOOK_KEY", Events: []string{"ticket_issued", "run_ended"}, File: "u.yaml", Line: 2},
		{URL: "http://127.0.0.1:9000/in", Secret: "s3cr3t", Events: []string{"ticket_resolved"}, IncludeArgs: true, File: "u.yaml", Line: 5},
		{URL: "http://127.0.0.1:9001/", Secret: "k", Events: []string{"ticket_issued"}, File: "u.yaml", Line: 8},
	}
	if diff := cmp.Diff(want, f.Webhooks()); diff != "" {
		t.Errorf("webhooks (-want +got):\n%s", diff)
	}
}

// Every refused form of notify is an error naming the file, the line and
// the key; a project file may not declare a webhook at all.
func TestNotifyDecodeRefused(t *testing.T) {
	ok := "url: https://h/x, secret: k, events: [run_ended]"
	tests := []struct {
		why    string
		source gate.Source
		text   string
		want   string
	}{
		{"a project file declares a webhook", gate.SourceProject, "agents: {}\nnotify:\n  - {" + ok + "}\n", "f.yaml:2: notify: only the user's file may declare webhooks (a project file could send"},
		{"a project file declares an empty list", gate.SourceProject, "notify: []\n", "f.yaml:1: notify: only the user's file may declare webhooks"},
		{"not a list", gate.SourceUser, "notify: {url: https://h/x}\n", "f.yaml:1: notify: want a list of webhooks"},
		{"an unknown key", gate.SourceUser, "notify:\n  - {" + ok + ", retries: 3}\n", "f.yaml:2: notify[0].retries: unknown key (want url, secret, events or include_args)"},
		{"no url", gate.SourceUser, "notify:\n  - {secret: k, events: [run_ended]}\n", "f.yaml:2: notify[0]: want url"},
		{"no secret", gate.SourceUser, "notify:\n  - {url: https://h/x, events: [run_ended]}\n", "f.yaml:2: notify[0]: want secret: every delivery is signed"},
		{"an empty secret", gate.SourceUser, "notify:\n  - {url: https://h/x, secret: \"\", events: [run_ended]}\n", "f.yaml:2: notify[0].secret: want a secret"},
		{"a malformed secret reference", gate.SourceUser, "notify:\n  - {url: https://h/x, secret: \"secret://9\", events: [run_ended]}\n", "f.yaml:2: notify[0].secret: secret:// at byte 0 is not followed by a name"},
		{"no events", gate.SourceUser, "notify:\n  - {url: https://h/x, secret: k}\n", "f.yaml:2: notify[0]: want events"},
		{"an empty event list", gate.SourceUser, "notify:\n  - {url: https://h/x, secret: k, events: []}\n", "f.yaml:2: notify[0].events: want a non-empty list"},
		{"an unknown event", gate.SourceUser, "notify:\n  - url: https://h/x\n    secret: k\n    events: [ticket_issued, step_done]\n", "f.yaml:4: notify[0].events[1]: want one of [ticket_issued ticket_resolved run_ended]"},
		{"an event twice", gate.SourceUser, "notify:\n  - {url: https://h/x, secret: k, events: [run_ended, run_ended]}\n", "f.yaml:2: notify[0].events[1]: event run_ended is listed twice"},
		{"a URL of another scheme", gate.SourceUser, "notify:\n  - {url: \"file:///etc/passwd\", secret: k, events: [run_ended]}\n", "f.yaml:2: notify[0].url: want an http:// or https:// URL"},
		{"a URL without a host", gate.SourceUser, "notify:\n  - {url: \"http:///x\", secret: k, events: [run_ended]}\n", "f.yaml:2: notify[0].url: want an http:// or https:// URL"},
		{"a URL with credentials", gate.SourceUser, "notify:\n  - {url: \"https://u:p@h/x\", secret: k, events: [run_ended]}\n", "f.yaml:2: notify[0].url: a URL may not hold credentials"},
		{"a secret in the URL", gate.SourceUser, "notify:\n  - {url: \"https://h/x?k=secret://K\", secret: k, events: [run_ended]}\n", "f.yaml:2: notify[0].url: a URL may not hold a secret reference"},
		{"include_args not a boolean", gate.SourceUser, "notify:\n  - {" + ok + ", include_args: yes}\n", "f.yaml:2: notify[0].include_args: want true or false"},
	}
	for _, tt := range tests {
		_, err := config.Parse("f.yaml", []byte(tt.text), tt.source)
		var ce *config.Error
		if err == nil || !errors.Is(err, config.ErrInvalid) || !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one starting %q", tt.why, err, tt.want)
		}
	}
}

// Loader.Webhooks reads the user's file only: a project's webhooks never
// reach the deliverer, and a project that declares one cannot resolve an
// agent (its file does not load).
func TestLoaderWebhooksUserFileOnly(t *testing.T) {
	dir := t.TempDir()
	user := filepath.Join(dir, "config.yaml")
	write(t, user, "agents: {build: {permission: {\"*\": allow}}}\nnotify:\n  - {url: \"http://127.0.0.1:1/\", secret: secret://K, events: [ticket_issued]}\n")
	loc := t.TempDir()
	write(t, config.ProjectFile(loc), "notify:\n  - {url: \"http://attacker.example/\", secret: k, events: [ticket_issued]}\n")
	l := config.Loader{UserFile: user}
	hooks, err := l.Webhooks()
	if err != nil {
		t.Fatal(err)
	}
	if len(hooks) != 1 || hooks[0].URL != "http://127.0.0.1:1/" || hooks[0].Secret != "secret://K" {
		t.Errorf("webhooks %+v, want the user's one only", hooks)
	}
	_, err = l.Effective("build", loc)
	if err == nil || !strings.Contains(err.Error(), config.ProjectFile(loc)+":1: notify: only the user's file may declare webhooks") {
		t.Errorf("a project with webhooks resolved with error %v", err)
	}
	if hooks, err := (config.Loader{}).Webhooks(); err != nil || hooks != nil {
		t.Errorf("no user's file: %v, %v; want none", hooks, err)
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// FuzzParseNotify: any text either decodes or is refused with an error
// naming the file and a line; a project file never yields a webhook, and
// every webhook decoded has a URL, a secret and known events.
func FuzzParseNotify(f *testing.F) {
	f.Add("notify:\n  - {url: \"https://h/x\", secret: \"secret://K\", events: [ticket_issued, run_ended], include_args: true}\n")
	f.Add("notify: [{url: \"http://127.0.0.1:1\", secret: k, events: [ticket_resolved]}]\n---\nnotify: []\n")
	f.Add(`{"notify": [{"url": "http://h/", "secret": "x", "events": ["run_ended"]}]}`)
	f.Fuzz(func(t *testing.T, text string) {
		for _, src := range []gate.Source{gate.SourceUser, gate.SourceProject} {
			file, err := config.Parse("f.yaml", []byte(text), src)
			if err != nil {
				var ce *config.Error
				if !errors.Is(err, config.ErrInvalid) || !errors.As(err, &ce) || ce.File != "f.yaml" ||
					!strings.HasPrefix(err.Error(), "f.yaml:"+strconv.Itoa(ce.Line)+": ") {
					t.Fatalf("error %q does not name the file and a line", err)
				}
				continue
			}
			hooks := file.Webhooks()
			if src == gate.SourceProject && len(hooks) > 0 {
				t.Fatalf("a project file declared webhooks %+v", hooks)
			}
			for _, h := range hooks {
				if h.URL == "" || h.Secret == "" || len(h.Events) == 0 || h.Line < 1 {
					t.Fatalf("webhook %+v", h)
				}
			}
		}
	})
}
