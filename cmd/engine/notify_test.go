package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stepgate/stepgate/cmd/engine/hosting/metricstest"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/commands/notify"
	"github.com/stepgate/stepgate/gate"
)

// userConfig writes the user's file (XDG_CONFIG_HOME/stepgate/config.yaml)
// for this test.
func userConfig(t *testing.T, text string) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	path := filepath.Join(dir, "stepgate", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// `engine serve` with notify: in the user's file delivers a ticket raised
// through the service to the receiver, signed with the secret the
// reference names, linked to --public-url, and counts it in /metrics.
func TestServeDeliversWebhooks(t *testing.T) {
	type got struct {
		header http.Header
		body   []byte
	}
	var mu sync.Mutex
	var reqs []got
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		reqs = append(reqs, got{r.Header.Clone(), b})
		mu.Unlock()
	}))
	defer recv.Close()
	t.Setenv("STEPGATE_TEST_HOOK_KEY", "k-0123456789")
	userConfig(t, "notify:\n  - url: "+recv.URL+"/in\n    secret: secret://STEPGATE_TEST_HOOK_KEY\n    events: [ticket_issued]\n")
	s := serveWithMetrics(t, "--public-url", "https://ops.example")
	fams := metricstest.Scrape(t, s.metricsURL)
	if v := metricstest.Sample(fams, "stepgate_webhook_deliveries_total", "event", "ticket_issued", "outcome", "failed"); v != 0 {
		t.Errorf("at start failed deliveries = %v, want 0", v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cf := connFlags{natsURL: s.natsURL, timeout: 30 * time.Second}
	c, err := cf.dialClient(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	info, err := c.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir(), Rules: []gate.Rule{{Action: "echo_fx", Resource: "*", Effect: gate.Ask}}})
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]string{"text": "ask me"})
	out, err := c.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1, Calls: []commands.CallRequest{{ID: "c1", Tool: "echo_fx", Args: args}}})
	if err != nil || len(out.Tickets) != 1 {
		t.Fatalf("step = %+v, %v; want one ticket", out, err)
	}
	var first got
	for deadline := time.Now().Add(20 * time.Second); ; {
		mu.Lock()
		n := len(reqs)
		if n > 0 {
			first = reqs[0]
		}
		mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no webhook delivery in 20s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := notify.Verify([]byte("k-0123456789"), first.header.Get(notify.HeaderTimestamp), first.header.Get(notify.HeaderSignature), first.body, time.Now(), notify.DefaultTolerance); err != nil {
		t.Errorf("signature with the referenced secret: %v", err)
	}
	var p notify.Payload
	if err := json.Unmarshal(first.body, &p); err != nil {
		t.Fatal(err)
	}
	if p.Event != "ticket_issued" || p.Ticket != out.Tickets[0].ID || p.Link != "https://ops.example/tickets/"+out.Tickets[0].ID || p.Tool != "echo_fx" {
		t.Errorf("payload %s; want ticket_issued of %s with its inbox link", first.body, out.Tickets[0].ID)
	}
	for deadline := time.Now().Add(10 * time.Second); metricstest.Sample(metricstest.Scrape(t, s.metricsURL), "stepgate_webhook_deliveries_total", "event", "ticket_issued", "outcome", "delivered") != 1; {
		if time.Now().After(deadline) {
			t.Fatal("stepgate_webhook_deliveries_total{event=ticket_issued,outcome=delivered} did not reach 1")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// serve refuses a webhook whose secret does not resolve, naming the file,
// the line and the reference (never a value), and a malformed --public-url.
func TestServeRefusesBadWebhookSetup(t *testing.T) {
	path := userConfig(t, "notify:\n  - {url: \"http://127.0.0.1:1/\", secret: \"secret://STEPGATE_TEST_UNSET_KEY\", events: [run_ended]}\n")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"serve", "--data", t.TempDir(), "--listen", ""}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), path+":2: notify: secret: secret://STEPGATE_TEST_UNSET_KEY: not set") {
		t.Errorf("serve with an unset secret: %v", err)
	}
	err = run(context.Background(), []string{"serve", "--data", t.TempDir(), "--listen", "", "--public-url", "ops.example/inbox"}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), `--public-url "ops.example/inbox": want the inbox's external base URL`) {
		t.Errorf("serve with a bad --public-url: %v", err)
	}
}
