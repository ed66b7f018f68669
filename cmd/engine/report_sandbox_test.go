package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
