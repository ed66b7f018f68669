package notify_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/commands/notify"
	"github.com/stepgate/stepgate/executor/executortest"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/step/steptest"
)

// secret signs the tests' deliveries.
var secret = []byte("test-secret-0123456789abcdef")

// received is one request a receiver got.
type received struct {
	header http.Header
	body   []byte
	at     time.Time
}

// receiver is a local HTTP receiver recording every request; status says
// what it answers (200 when nil).
type receiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	got    []received
	status func(n int) int // n counts requests from 1
	n      atomic.Int64
}

func newReceiver(t *testing.T, status func(n int) int) *receiver {
	t.Helper()
	r := &receiver{status: status}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		n := int(r.n.Add(1))
		r.mu.Lock()
		r.got = append(r.got, received{header: req.Header.Clone(), body: body, at: time.Now()})
		r.mu.Unlock()
		code := http.StatusOK
		if r.status != nil {
			code = r.status(n)
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

// requests returns what the receiver got so far.
func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// waitFor waits until the receiver has at least n requests.
func (r *receiver) waitFor(t *testing.T, n int) []received {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if got := r.requests(); len(got) >= n {
			return got
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the receiver got %d requests in 20s, want %d", len(r.requests()), n)
	return nil
}

// payload decodes a request's body.
func (q received) payload(t *testing.T) notify.Payload {
	t.Helper()
	var p notify.Payload
	if err := json.Unmarshal(q.body, &p); err != nil {
		t.Fatalf("payload %s: %v", q.body, err)
	}
	return p
}

// counts is notify.Metrics counting per event.
type counts struct {
	mu                         sync.Mutex
	delivered, retried, failed map[string]int
}

func newCounts() *counts {
	return &counts{delivered: map[string]int{}, retried: map[string]int{}, failed: map[string]int{}}
}

func (c *counts) Delivered(e string) { c.mu.Lock(); c.delivered[e]++; c.mu.Unlock() }
func (c *counts) Retried(e string)   { c.mu.Lock(); c.retried[e]++; c.mu.Unlock() }
func (c *counts) Failed(e string)    { c.mu.Lock(); c.failed[e]++; c.mu.Unlock() }

func (c *counts) get(m *map[string]int, e string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return (*m)[e]
}

// startHost starts an engine host on s with its own state directory.
func startHost(t *testing.T, s *steptest.Server, name string) *commands.Host {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var cnt executortest.Counts
	h, err := commands.StartHost(ctx, s.JS, executortest.Registry(t, &cnt), commands.HostConfig{
		StateDir: t.TempDir(), Engine: commands.Config{Host: name}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("close host %s: %v", name, err)
		}
	})
	return h
}

// startDeliverer runs a deliverer for host h until the returned stop (or
// the test's end); cfg's JS, Stream and Facts default to s's and h's.
func startDeliverer(t *testing.T, s *steptest.Server, h *commands.Host, cfg notify.Config) (stop func()) {
	t.Helper()
	if cfg.JS == nil {
		cfg.JS = s.JS
	}
	cfg.Stream, cfg.Facts = h.Log.Name(), h.Proj
	d, err := notify.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("deliverer: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	waitConsumer(t, s, h)
	return stop
}

// waitConsumer waits until the fleet's consumer exists, so that commits
// made from now on are delivered.
func waitConsumer(t *testing.T, s *steptest.Server, h *commands.Host) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := s.JS.Consumer(context.Background(), h.Log.Name(), notify.DefaultConsumer); err == nil {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the webhook consumer was not created")
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// askRules make count_fx ask for "ask *" texts.
var askRules = []gate.Rule{{Action: "count_fx", Resource: "ask *", Effect: gate.Ask}}

// askingRun starts a run in project and submits a step whose one call asks;
// it returns the run and the ticket.
func askingRun(t *testing.T, h *commands.Host, project, text string) (run, ticket string) {
	t.Helper()
	ctx := ctxT(t)
	info, err := h.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir(), Project: project, Rules: askRules})
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]string{"text": text})
	out, err := h.SubmitStep(ctx, commands.SubmitStepRequest{Run: info.Run, Step: 1,
		Calls: []commands.CallRequest{{ID: "a", Tool: "count_fx", Args: args}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Tickets) != 1 {
		t.Fatalf("the step raised %d tickets, want 1", len(out.Tickets))
	}
	return info.Run, out.Tickets[0].ID
}

// logger writes to buf.
func logger(buf io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// byEvent indexes payloads by event name.
func byEvent(t *testing.T, rs []received) map[string]received {
	t.Helper()
	out := map[string]received{}
	for _, r := range rs {
		out[r.payload(t).Event] = r
	}
	return out
}
