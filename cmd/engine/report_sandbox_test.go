package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/events"
)

// The report of a run recorded by `engine run` under the sandbox profile
// of the user's file (workspace-write, the network through the proxy, a
// writable root), opened in a headless Chromium: the header says the
// profile the run pinned, each bash call's line the sandbox it ran in,
// and its opened details what the sandbox enforced (Landlock's ABI, the
// namespaces, seccomp) and the profile; the glob call, which ran no
// command, shows none.
func TestReportShowsTheSandboxInChromium(t *testing.T) {
	dir := t.TempDir()
	loc, cache := filepath.Join(dir, "ws"), filepath.Join(dir, "cache")
	for _, d := range []string{loc, cache, filepath.Join(dir, ".config", "stepgate")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, ".config"))
	conf := "sandbox:\n  mode: workspace-write\n  network: proxy\n  allow: [\"example.com:443\"]\n  writable: [\"" + cache + "\"]\n" +
		"agents:\n  build:\n    permission: { \"*\": allow }\n"
	script := `{"calls":[{"id":"c1","tool":"bash","args":{"command":"echo in > inside.txt"}},{"id":"c2","tool":"glob","args":{"pattern":"*"}}]}` + "\n"
	for name, text := range map[string]string{filepath.Join(dir, ".config", "stepgate", "config.yaml"): conf, filepath.Join(dir, "calls.jsonl"): script} {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data := filepath.Join(dir, "data")
	out, err := engineVerb(t, "run", "--data", data, "--script", filepath.Join(dir, "calls.jsonl"), "--location", loc)
	if err != nil {
		t.Fatalf("engine run: %v\n%s", err, out)
	}
	run := ""
	for _, l := range strings.Split(out, "\n") {
		if id, ok := strings.CutPrefix(l, "run "); ok && strings.Contains(id, " started") {
			run, _, _ = strings.Cut(id, " ")
		}
	}
	if run == "" {
		t.Fatalf("engine run printed no run id:\n%s", out)
	}
	file := filepath.Join(dir, "report.html")
	if out, err := engineVerb(t, "report", "--data", data, "-o", file, run); err != nil {
		t.Fatalf("engine report: %v\n%s", err, out)
	}

	b := newBrowser(t)
	b.load(t, file)
	wantRun := "sandbox workspace-write, network proxy (example.com:443), writable " + cache
	if got := eval[string](t, b, `document.getElementById("run-sandbox").textContent`); got != wantRun {
		t.Errorf("the run's sandbox reads %q; want %q", got, wantRun)
	}
	lines := eval[[]string](t, b, `Array.from(document.querySelectorAll("#steps .call")).map(e => { const s = e.querySelector(".sandbox"); return s ? s.textContent : "" })`)
	if len(lines) != 2 || lines[0] != "sandbox workspace-write, network proxy" || lines[1] != "" {
		t.Errorf("the calls' sandboxes read %q; want the bash call's workspace-write and proxy, none for glob", lines)
	}
	openStep(t, b, 1)
	rec := eval[[]string](t, b, `Array.from(document.querySelectorAll("details.io .sandbox-record")).map(e => e.innerText)`)
	if len(rec) != 1 {
		t.Fatalf("%d sandbox records in step 1's details; want the bash call's: %q", len(rec), rec)
	}
	for _, want := range []string{"sandbox workspace-write, network proxy, Landlock ABI ", "namespaces user mount pid net, seccomp", "profile: " + strings.TrimPrefix(wantRun, "sandbox ")} {
		if !strings.Contains(rec[0], want) {
			t.Errorf("the bash call's sandbox record reads %q; want it to say %q", rec[0], want)
		}
	}
	if ext := b.externalRequests(file); len(ext) != 0 {
		t.Errorf("the page sent requests besides its file: %v", ext)
	}
	b.screenshot(t, "report-sandbox.png", true)
}

// engine show says the profile a call ran under when it differs from the
// run's pinned one (a host's --sandbox floor tightened it there), and not
// when it is the pinned one.
func TestShowSaysAFlooredCallsProfile(t *testing.T) {
	rec := &events.SandboxRecord{Mode: "workspace-write", Network: "off", LandlockABI: 7, Namespaces: []string{"user", "mount", "pid", "net"}, Seccomp: true,
		Profile: &events.SandboxProfile{Mode: "workspace-write", Network: "off"}}
	for _, tc := range []struct {
		pinned *events.SandboxProfile
		want   string
	}{
		{nil, "        sandbox workspace-write, network off (the run pinned off: the host's --sandbox floor tightened it)\n"},
		{&events.SandboxProfile{Mode: "workspace-write", Network: "off"}, ""},
	} {
		d := &showDoc{Run: &sgclient.Run{ID: "r", Snapshot: events.RunStarted{Agent: "build", Sandbox: tc.pinned}},
			Timeline: timelineDoc{Steps: []stepView{{N: 1, Final: true, Calls: []callView{{ID: "c1", Tool: "bash", Verdict: "allow",
				Result: &resultView{Preview: "ok", Bytes: 2}, Sandbox: rec}}}}}}
		var b strings.Builder
		timeline(&b, d, palette{})
		out := b.String()
		if !strings.Contains(out, "[2 B, sandbox workspace-write, network off, landlock 7, seccomp, namespaces user mount pid net]\n") {
			t.Errorf("pinned %v: the call's line does not say what was enforced:\n%s", tc.pinned, out)
		}
		if got := strings.Contains(out, "floor tightened it"); got != (tc.want != "") || tc.want != "" && !strings.Contains(out, tc.want) {
			t.Errorf("pinned %v: show printed\n%s\nwant the line %q", tc.pinned, out, tc.want)
		}
	}
}
