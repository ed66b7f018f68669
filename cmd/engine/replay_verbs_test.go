package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stepgate/stepgate/cmd/engine/hosting"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/replay"
)

// recorded is a data directory whose log holds runs for diff and audit,
// recorded by a real engine (and served over NATS while it records).
type recorded struct {
	data, url string
	// diff: a and b differ in step 2's call, a and c in step 2's result.
	a, b, c string
	// audit: one run of project "p1" (allow, deny, ask+once, ask+always,
	// saved grant, reject) and one of project "p2" (allow).
	audit, other string
	grant        string
	stop         func()
}

// record drives an engine on an embedded server and returns its directory;
// the engine keeps serving until stop.
func record(t *testing.T) *recorded {
	t.Helper()
	life, cancel := context.WithCancel(context.Background()) // the engine's
	t.Cleanup(cancel)
	ctx, cancelSteps := context.WithTimeout(life, time.Minute) // the recording's
	t.Cleanup(cancelSteps)
	data, ws := t.TempDir(), t.TempDir()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	e, err := startEmbedded(life, hosting.Options{DataDir: data, Listen: "127.0.0.1:0", Log: log, TestTools: true})
	if err != nil {
		t.Fatal(err)
	}
	stopAPI, err := serveAPI(life, e.Conn, e.Host, "0.0.0-dev", log)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorded{data: data, url: e.Server.ClientURL()}
	closed := false
	rec.stop = func() {
		if !closed {
			closed = true
			cancel()
			_ = stopAPI()
			if err := e.Close(); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(rec.stop)
	api := commands.Wire{Host: e.Host}
	file := filepath.Join(ws, "f.txt")
	write := func(s string) {
		if err := os.WriteFile(file, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	call := func(id, tool string, args any) commands.CallRequest {
		raw, _ := json.Marshal(args)
		return commands.CallRequest{ID: id, Tool: tool, Args: raw}
	}
	start := func(project string, rules []gate.Rule) string {
		info, err := api.StartRun(ctx, commands.StartRunRequest{Location: ws, Project: project, Rules: rules})
		if err != nil {
			t.Fatal(err)
		}
		return info.Run
	}
	submit := func(run string, n int, c commands.CallRequest) *commands.StepOutcome {
		out, err := api.SubmitStep(ctx, commands.SubmitStepRequest{Run: run, Step: n, Calls: []commands.CallRequest{c}})
		if err != nil {
			t.Fatalf("run %s step %d: %v", run, n, err)
		}
		return out
	}
	end := func(run string) {
		if _, err := api.EndRun(ctx, commands.EndRunRequest{Run: run}); err != nil {
			t.Fatal(err)
		}
	}
	script := func(second commands.CallRequest) string {
		run := start("diffs", nil)
		submit(run, 1, call("c1", "echo", map[string]string{"text": "a"}))
		submit(run, 2, second)
		submit(run, 3, call("c3", "echo", map[string]string{"text": "z"}))
		end(run)
		return run
	}
	write("first\n")
	rec.a = script(call("c2", "read", map[string]string{"path": file}))
	rec.b = script(call("c2", "echo", map[string]string{"text": "b"}))
	write("second\n")
	rec.c = script(call("c2", "read", map[string]string{"path": file}))

	run := start("p1", []gate.Rule{{Action: "bash", Resource: "*", Effect: gate.Ask}, {Action: "bash", Resource: "rm *", Effect: gate.Deny}})
	rec.audit = run
	submit(run, 1, call("c1", "echo", map[string]string{"text": "hi"}))
	submit(run, 2, call("c2", "bash", map[string]string{"command": "rm x"}))
	reply := func(n int, c commands.CallRequest, how, who, msg string) {
		out := submit(run, n, c)
		if out.Final || len(out.Tickets) != 1 {
			t.Fatalf("step %d: %+v, want one ticket", n, out)
		}
		if _, err := api.Reply(ctx, commands.ReplyRequest{Ticket: out.Tickets[0].ID, Reply: how, Principal: who, Message: msg}); err != nil {
			t.Fatal(err)
		}
	}
	reply(3, call("c3", "bash", map[string]string{"command": "echo one"}), "once", "alice", "")
	reply(4, call("c4", "bash", map[string]string{"command": "echo two"}), "always", "bob", "")
	submit(run, 5, call("c5", "bash", map[string]string{"command": "echo two"}))
	reply(6, call("c6", "bash", map[string]string{"command": "ls"}), "reject", "carol", "not that")
	grants, err := api.Grants(ctx, commands.GrantsRequest{Project: "p1"})
	if err != nil || len(grants) == 0 {
		t.Fatalf("grants of p1: %+v, %v", grants, err)
	}
	rec.grant = grants[0].ID
	rec.other = start("p2", nil)
	submit(rec.other, 1, call("c1", "echo", map[string]string{"text": "other"}))
	return rec
}

// engineVerb runs one engine verb and returns its output and error.
func engineVerb(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, &out, &errOut)
	if errOut.Len() > 0 {
		t.Logf("engine %s stderr: %s", args[0], errOut.String())
	}
	return out.String(), err
}

// engine diff names the first divergence exactly — another call, another
// result — exits 1 when runs differ and 0 for a run diffed with itself,
// through the service (--nats) and in-process (--data).
func TestDiffNamesTheFirstDivergence(t *testing.T) {
	rec := record(t)
	check := func(conn []string) {
		t.Helper()
		out, err := engineVerb(t, append(append([]string{"diff"}, conn...), rec.a, rec.a)...)
		if err != nil || !strings.Contains(out, "no divergence: 3 steps, all equal") {
			t.Errorf("diff A A: %v\n%s", err, out)
		}
		out, err = engineVerb(t, append(append([]string{"diff"}, conn...), rec.a, rec.b)...)
		t.Logf("diff A B:\n%s", out)
		if exitCode(err) != 1 || !strings.Contains(out, "first divergence: step 2, call 1: another call\n  A: read {\"path\":") ||
			!strings.Contains(out, "  B: echo {\"text\":\"b\"}\n") ||
			!strings.Contains(out, "compared 3 steps: 2 equal, 1 differ (call 1); 0 only in A, 0 only in B") {
			t.Errorf("diff A B: %v\n%s", err, out)
		}
		out, err = engineVerb(t, append(append([]string{"diff", "--json"}, conn...), rec.a, rec.c)...)
		if exitCode(err) != 1 {
			t.Errorf("diff A C: %v, want exit 1", err)
		}
		var d replay.Diff
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatalf("diff --json: %v\n%s", err, out)
		}
		if f := d.First; f == nil || f.Step != 2 || f.Call != 1 || f.Kind != replay.DiffResult ||
			!strings.Contains(f.A, "first") || !strings.Contains(f.B, "second") || d.Equal != 2 || d.Differ[replay.DiffResult] != 1 {
			t.Errorf("diff --json A C = %+v (first %+v), want a result divergence at step 2 call 1", d, d.First)
		}
	}
	check([]string{"--nats", rec.url})
	rec.stop()
	check([]string{"--data", rec.data})
	if _, err := engineVerb(t, "diff", "--data", rec.data, rec.a); exitCode(err) != 2 {
		t.Errorf("diff with one run: %v, want a usage error", err)
	}
}

// auditRows runs engine audit --format jsonl with args and decodes it.
func auditRows(t *testing.T, args ...string) []replay.AuditRow {
	t.Helper()
	out, err := engineVerb(t, append([]string{"audit"}, args...)...)
	if err != nil {
		t.Fatalf("audit %v: %v\n%s", args, err, out)
	}
	var rows []replay.AuditRow
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var r replay.AuditRow
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("audit %v printed %q: %v", args, out, err)
		}
		rows = append(rows, r)
	}
	return rows
}

// engine audit gives one row per decision with its rule, layer, grant,
// ticket, principal and reply, through the user's connection (--nats) and
// in-process (--data); --project and --since filter; the CSV has a header
// and parses back to the same rows.
func TestAuditRowsOfEveryKindOfDecision(t *testing.T) {
	rec := record(t)
	p1 := []replay.AuditRow{
		{Step: 1, Call: "c1", Tool: "echo", Action: "echo", Resources: []string{"hi"}, Verdict: "allow", Rule: "* * allow", Source: "default"},
		{Step: 2, Call: "c2", Tool: "bash", Action: "bash", Resources: []string{"rm x"}, Verdict: "block", Rule: "bash rm * deny", Source: "run"},
		{Step: 3, Call: "c3", Tool: "bash", Action: "bash", Resources: []string{"echo one"}, Verdict: "confirm", Rule: "bash * ask", Source: "run",
			Principal: "alice", Reply: "once", How: replay.HowPerson},
		{Step: 4, Call: "c4", Tool: "bash", Action: "bash", Resources: []string{"echo two"}, Verdict: "confirm", Rule: "bash * ask", Source: "run",
			Principal: "bob", Reply: "always", How: replay.HowPerson},
		{Step: 5, Call: "c5", Tool: "bash", Action: "bash", Resources: []string{"echo two"}, Verdict: "allow", Rule: "bash echo two allow", Source: "saved",
			Grant: rec.grant, Principal: "bob"},
		{Step: 6, Call: "c6", Tool: "bash", Action: "bash", Resources: []string{"ls"}, Verdict: "confirm", Rule: "bash * ask", Source: "run",
			Principal: "carol", Reply: "reject", How: replay.HowPerson},
	}
	for i := range p1 {
		p1[i].Run, p1[i].Project = rec.audit, "p1"
	}
	p2 := replay.AuditRow{Run: rec.other, Project: "p2", Step: 1, Call: "c1", Tool: "echo", Action: "echo", Resources: []string{"other"},
		Verdict: "allow", Rule: "* * allow", Source: "default"}
	// comparable drops what the test cannot know (times, ticket ids), having
	// checked it is there.
	comparable := func(rows []replay.AuditRow) []replay.AuditRow {
		t.Helper()
		out := slices.Clone(rows)
		for i := range out {
			r := &out[i]
			if r.Time.IsZero() || time.Since(r.Time) > time.Minute || r.DurationMs < 0 || (r.Verdict == "confirm") != (r.Ticket != "") {
				t.Errorf("row %d: time %v, duration %d ms, verdict %s, ticket %q", i, r.Time, r.DurationMs, r.Verdict, r.Ticket)
			}
			r.Time, r.DurationMs, r.Ticket = time.Time{}, 0, ""
		}
		return out
	}
	check := func(conn ...string) {
		t.Helper()
		all := auditRows(t, conn...)
		if n := len(all) - len(slices.DeleteFunc(slices.Clone(all), func(r replay.AuditRow) bool { return r.Project == "diffs" })); n != 9 {
			t.Errorf("audit %v: %d rows of the diffed runs, want 9 (3 runs of 3 steps)", conn, n)
		}
		all = slices.DeleteFunc(all, func(r replay.AuditRow) bool { return r.Project == "diffs" })
		if diff := cmp.Diff(append(slices.Clone(p1), p2), comparable(all), cmpopts.IgnoreUnexported(replay.AuditRow{})); diff != "" {
			t.Errorf("audit %v (-want +got):\n%s", conn, diff)
		}
		if diff := cmp.Diff(p1, comparable(auditRows(t, append(conn, "--project", "p1")...)), cmpopts.IgnoreUnexported(replay.AuditRow{})); diff != "" {
			t.Errorf("audit --project p1 (-want +got):\n%s", diff)
		}
		if got := auditRows(t, append(conn, "--since", "1h", "--project", "p2")...); len(got) != 1 || got[0].Run != rec.other {
			t.Errorf("audit --since 1h --project p2: %+v", got)
		}
	}
	check("--nats", rec.url)
	rec.stop()
	check("--data", rec.data)
	time.Sleep(30 * time.Millisecond)
	if got := auditRows(t, "--data", rec.data, "--since", "20ms"); len(got) != 0 {
		t.Errorf("audit --since 20ms, 30 ms after the last decision: %+v", got)
	}

	jsonl := auditRows(t, "--data", rec.data)
	out, err := engineVerb(t, "audit", "--data", rec.data, "--format", "csv")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatalf("the CSV does not parse: %v\n%s", err, out)
	}
	if len(recs) != len(jsonl)+1 || !slices.Equal(recs[0], replay.AuditColumns) {
		t.Fatalf("CSV: %d records, header %v; want %d and %v", len(recs), recs[0], len(jsonl)+1, replay.AuditColumns)
	}
	for i, rec := range recs[1:] {
		want := jsonl[i]
		resources, _ := json.Marshal(want.Resources)
		configVersion := "" // the host's own file
		if want.ConfigVersion > 0 {
			configVersion = strconv.FormatUint(want.ConfigVersion, 10)
		}
		wantRec := []string{want.Time.UTC().Format(time.RFC3339Nano), want.Run, want.Project, strconv.Itoa(want.Step), want.Call, want.Tool,
			want.Action, string(resources), want.Verdict, want.Rule, want.Source, want.Grant, want.Ticket, want.Principal, want.Reply,
			want.How, want.By, strconv.FormatInt(want.DurationMs, 10), "", string(want.OriginalArgs), string(want.EditedArgs), configVersion,
			jsonOrEmpty(t, want.RunSandbox), jsonOrEmpty(t, want.Sandbox)}
		if diff := cmp.Diff(wantRec, rec); diff != "" {
			t.Errorf("CSV row %d (-jsonl +csv):\n%s", i+1, diff)
		}
	}
	if _, err := engineVerb(t, "audit", "--data", rec.data, "--format", "xml"); exitCode(err) != 2 {
		t.Errorf("audit --format xml: %v, want a usage error", err)
	}
}

// jsonOrEmpty is v as JSON, "" for nil: a CSV cell of the audit export.
func jsonOrEmpty[T any](t *testing.T, v *T) string {
	t.Helper()
	if v == nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
