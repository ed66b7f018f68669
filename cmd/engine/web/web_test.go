package web

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/cmd/engine/service/servicetest"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/builtin"
	"github.com/stepgate/stepgate/gate"
)

const (
	tokenOne = "sgop_test-token-one"
	tokenTwo = "sgop_test-token-two"
)

func operators() config.Operators {
	return config.Operators{
		{Name: "ops-1", TokenSHA256: sha256.Sum256([]byte(tokenOne))},
		{Name: "ops-2", TokenSHA256: sha256.Sum256([]byte(tokenTwo))},
	}
}

// app is the web app on a served engine, listening on loopback.
type app struct {
	eng *sgclient.Client
	srv *httptest.Server
	e   *servicetest.Engine
}

func startApp(t *testing.T) *app {
	t.Helper()
	e, err := servicetest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	c := sgclient.New(e.Conn, sgclient.WithTimeout(30*time.Second))
	page := func(ctx context.Context, w io.Writer, api sgclient.API, run string) error {
		r, err := api.Show(ctx, sgclient.ShowRequest{Run: run})
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "<p>run %s</p>", r.ID)
		return err
	}
	s, err := New(Config{API: c, Log: e.Host.Log, Operators: operators(), RunPage: page,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	srv := httptest.NewServer(s)
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("live feed: %v", err)
		}
		srv.Close()
	})
	return &app{eng: c, srv: srv, e: e}
}

// ask starts a run whose bash call waits for a human; it returns the run
// and the ticket.
func (a *app) ask(t *testing.T, command string) (run, ticket string) {
	t.Helper()
	ctx := context.Background()
	info, err := a.eng.StartRun(ctx, sgclient.StartRunRequest{Location: t.TempDir(), Project: "web-test",
		Rules: []gate.Rule{{Action: "bash", Resource: "*", Effect: gate.Ask}}})
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]string{"command": command})
	out, err := a.eng.SubmitStep(ctx, sgclient.SubmitStepRequest{Run: info.Run, Step: 1,
		Calls: []sgclient.CallRequest{{ID: "c1", Tool: "bash", Args: args}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Tickets) != 1 {
		t.Fatalf("step 1 = %+v, want one ticket", out)
	}
	return info.Run, out.Tickets[0].ID
}

// resolution is the ticket's answer as the run records it (nil: pending).
func (a *app) resolution(t *testing.T, run, ticket string) *sgclient.Ticket {
	t.Helper()
	r, err := a.eng.Show(context.Background(), sgclient.ShowRequest{Run: run})
	if err != nil {
		t.Fatal(err)
	}
	tk := r.Ticket(ticket)
	if tk == nil {
		t.Fatalf("run %s has no ticket %s", run, ticket)
	}
	return tk
}

func (a *app) do(t *testing.T, c *http.Client, method, path, body string, hdr map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, a.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if c == nil {
		c = a.srv.Client()
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// signIn is a browser-like client with a session: its cookie jar and the
// session's CSRF token.
func (a *app) signIn(t *testing.T, token string) (*http.Client, string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	form := url.Values{"token": {token}}.Encode()
	code, _ := a.do(t, c, "POST", "/login", form, map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Sec-Fetch-Site": "same-origin"})
	if code != http.StatusSeeOther {
		t.Fatalf("sign in: %d", code)
	}
	code, body := a.do(t, c, "GET", "/api/session", "", nil)
	var s sgclient.Session
	if code != 200 || json.Unmarshal([]byte(body), &s) != nil || s.CSRF == "" {
		t.Fatalf("session: %d %s", code, body)
	}
	return c, s.CSRF
}

// Without a token every API request is 401 and a reply changes nothing:
// no token, a wrong bearer token, a token's hash as the token, a cookie
// the app did not make.
func TestNoTokenIsRefusedAndChangesNothing(t *testing.T) {
	a := startApp(t)
	run, ticket := a.ask(t, "echo hi")
	reply := `{"reply":"once"}`
	sum := sha256.Sum256([]byte(tokenOne))
	for name, hdr := range map[string]map[string]string{
		"no token":       nil,
		"wrong token":    {"Authorization": "Bearer sgop_nope"},
		"hash as token":  {"Authorization": "Bearer " + fmt.Sprintf("%x", sum)},
		"basic":          {"Authorization": "Basic b3BzLTE6eA=="},
		"forged session": {"Cookie": "sg_session=forged"},
	} {
		for _, r := range []struct{ method, path, body string }{
			{"POST", "/api/tickets/" + ticket + "/reply", reply},
			{"GET", "/api/tickets", ""},
			{"GET", "/api/runs", ""},
			{"GET", "/api/runs/" + run, ""},
			{"GET", "/api/grants", ""},
			{"GET", "/api/events", ""},
			{"POST", "/api/grants/x/revoke", ""},
		} {
			if code, body := a.do(t, nil, r.method, r.path, r.body, hdr); code != http.StatusUnauthorized || !strings.Contains(body, `"code":"unauthorized"`) {
				t.Errorf("%s: %s %s = %d %s, want 401 unauthorized", name, r.method, r.path, code, body)
			}
		}
	}
	if res := a.resolution(t, run, ticket).Resolution; res != nil {
		t.Fatalf("the ticket was answered without a token: %+v", res)
	}
	// A page without a session goes to the sign-in form.
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest("GET", a.srv.URL+"/inbox", nil)
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/login" {
		t.Errorf("GET /inbox without a session = %d to %q, want a redirect to /login", res.StatusCode, res.Header.Get("Location"))
	}
	// A wrong token at the form opens no session.
	jar, _ := cookiejar.New(nil)
	c.Jar = jar
	a.do(t, c, "POST", "/login", "token=sgop_nope", map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
	if code, _ := a.do(t, c, "GET", "/api/tickets", "", nil); code != http.StatusUnauthorized {
		t.Errorf("after a failed sign-in: %d, want 401", code)
	}
}

// A reply forged from another site with the operator's session cookie is
// refused: cross-origin (the browser's Sec-Fetch-Site or Origin), or
// without the session's CSRF token. The ticket stays pending; the same
// reply from the app's page is answered and records operator:ops-1.
func TestCrossSitePostIsRefused(t *testing.T) {
	a := startApp(t)
	run, ticket := a.ask(t, "echo hi")
	c, csrf := a.signIn(t, tokenOne)
	path := "/api/tickets/" + ticket + "/reply"
	body := `{"reply":"once"}`
	for name, hdr := range map[string]map[string]string{
		"cross-site fetch":    {"Sec-Fetch-Site": "cross-site", "X-CSRF-Token": csrf},
		"other origin":        {"Origin": "http://attacker.example", "X-CSRF-Token": csrf},
		"form without token":  {"Sec-Fetch-Site": "same-origin", "Content-Type": "text/plain"},
		"wrong csrf token":    {"Sec-Fetch-Site": "same-origin", "X-CSRF-Token": "x" + csrf},
		"same-site, no token": {"Sec-Fetch-Site": "same-site"},
	} {
		if code, resp := a.do(t, c, "POST", path, body, hdr); code != http.StatusForbidden {
			t.Errorf("%s: %d %s, want 403", name, code, resp)
		} else {
			t.Logf("%s: 403 %s", name, strings.TrimSpace(resp))
		}
	}
	if res := a.resolution(t, run, ticket).Resolution; res != nil {
		t.Fatalf("a forged request answered the ticket: %+v", res)
	}
	// The body cannot name another principal: the operator's is recorded.
	code, resp := a.do(t, c, "POST", path, `{"reply":"once","principal":"someone-else"}`, map[string]string{"Sec-Fetch-Site": "same-origin", "X-CSRF-Token": csrf})
	if code != 200 {
		t.Fatalf("reply from the page: %d %s", code, resp)
	}
	res := a.resolution(t, run, ticket).Resolution
	if res == nil || res.Principal != "operator:ops-1" || !res.Approved {
		t.Fatalf("resolution = %+v, want approved by operator:ops-1", res)
	}
	// A second reply: ticket_resolved, 409.
	if code, resp := a.do(t, c, "POST", path, body, map[string]string{"X-CSRF-Token": csrf}); code != http.StatusConflict || !strings.Contains(resp, sgclient.CodeTicketResolved) {
		t.Errorf("second reply = %d %s, want 409 ticket_resolved", code, resp)
	}
}

// A script's bearer token needs no CSRF token and records its operator;
// a malformed body is refused before anything is asked.
func TestBearerReplyRecordsItsOperator(t *testing.T) {
	a := startApp(t)
	run, ticket := a.ask(t, "echo hi")
	auth := map[string]string{"Authorization": "Bearer " + tokenTwo}
	path := "/api/tickets/" + ticket + "/reply"
	for _, bad := range []string{`{"reply":"once","unknown":1}`, `{"reply":"once"} {}`, `[`, `{"ticket":"01OTHER","reply":"once"}`} {
		if code, resp := a.do(t, nil, "POST", path, bad, auth); code != http.StatusBadRequest {
			t.Errorf("body %s = %d %s, want 400", bad, code, resp)
		}
	}
	code, body := a.do(t, nil, "GET", "/api/tickets?project=web-test", "", auth)
	var page sgclient.TicketPage
	if code != 200 || json.Unmarshal([]byte(body), &page) != nil || len(page.Tickets) != 1 || page.Tickets[0].ID != ticket {
		t.Fatalf("GET /api/tickets = %d %s", code, body)
	}
	code, body = a.do(t, nil, "POST", path, `{"reply":"reject","message":"not now"}`, auth)
	if code != 200 {
		t.Fatalf("reply: %d %s", code, body)
	}
	res := a.resolution(t, run, ticket).Resolution
	if res == nil || res.Principal != "operator:ops-2" || res.Approved || res.Message != "not now" {
		t.Fatalf("resolution = %+v, want rejected by operator:ops-2 with the message", res)
	}
	if code, body := a.do(t, nil, "GET", "/api/runs/"+run, "", auth); code != 200 || !strings.Contains(body, "The user rejected this call: not now") {
		t.Errorf("GET /api/runs/%s = %d %s", run, code, body)
	}
	if code, body := a.do(t, nil, "GET", "/api/runs/01NOSUCHRUN", "", auth); code != 404 || !strings.Contains(body, sgclient.CodeRunNotFound) {
		t.Errorf("unknown run = %d %s, want 404 run_not_found", code, body)
	}
}

// The live stream is read from the log: a ticket answered without the web
// app (through the service, as the CLI or another host does) is told to an
// open stream within a second.
func TestLiveStreamTellsATicketAnsweredElsewhere(t *testing.T) {
	a := startApp(t)
	req, _ := http.NewRequest("GET", a.srv.URL+"/api/events", nil)
	req.Header.Set("Authorization", "Bearer "+tokenOne)
	res, err := a.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); res.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("GET /api/events = %d %s", res.StatusCode, ct)
	}
	evs := make(chan sgclient.LiveEvent, 64)
	go func() {
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var ev sgclient.LiveEvent
				if json.Unmarshal([]byte(data), &ev) == nil {
					evs <- ev
				}
			}
		}
		close(evs)
	}()
	run, ticket := a.ask(t, "echo hi")
	waitFor(t, evs, sgclient.LiveTicketIssued, ticket, 5*time.Second)
	start := time.Now()
	if _, err := a.eng.Reply(context.Background(), sgclient.ReplyRequest{Ticket: ticket, Reply: "once", Principal: "cli-user"}); err != nil {
		t.Fatal(err)
	}
	ev := waitFor(t, evs, sgclient.LiveTicketResolved, ticket, time.Second)
	t.Logf("ticket_resolved reached the stream %v after the reply returned: %+v", time.Since(start), ev)
	if ev.Run != run {
		t.Errorf("event run = %s, want %s", ev.Run, run)
	}
}

// A ticket answered on another host of the fleet (its own projection, its
// own commit) reaches this host's live stream: the stream is the log's.
func TestLiveStreamTellsATicketAnsweredOnAnotherHost(t *testing.T) {
	a := startApp(t)
	js, err := jetstream.New(a.e.Conn)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := builtin.Tools()
	if err != nil {
		t.Fatal(err)
	}
	more, err := builtin.TestTools() // the steps call echo
	if err != nil {
		t.Fatal(err)
	}
	tools = append(tools, more...)
	reg, err := executor.NewRegistry(tools...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h2, err := commands.StartHost(ctx, js, reg, commands.HostConfig{StateDir: t.TempDir(), Lease: commands.LeaseConfig{Off: true},
		Engine: commands.Config{Host: "h2", ToolOutputDir: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	defer h2.Close()
	evs := stream(t, a)
	_, ticket := a.ask(t, "echo hi")
	waitFor(t, evs, sgclient.LiveTicketIssued, ticket, 5*time.Second)
	res, err := commands.Wire{Host: h2}.Reply(ctx, sgclient.ReplyRequest{Ticket: ticket, Reply: "once", Principal: "ops-2"})
	if err != nil {
		t.Fatal(err)
	}
	ev := waitFor(t, evs, sgclient.LiveTicketResolved, ticket, time.Second)
	t.Logf("answered on h2 (%+v); h1's stream told %+v", res.Outcome != nil, ev)
}

// stream opens the app's live stream with a bearer token and decodes its
// events until the test ends.
func stream(t *testing.T, a *app) <-chan sgclient.LiveEvent {
	t.Helper()
	req, _ := http.NewRequest("GET", a.srv.URL+"/api/events", nil)
	req.Header.Set("Authorization", "Bearer "+tokenOne)
	res, err := a.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	evs := make(chan sgclient.LiveEvent, 64)
	go func() {
		defer close(evs)
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var ev sgclient.LiveEvent
				if json.Unmarshal([]byte(data), &ev) == nil {
					evs <- ev
				}
			}
		}
	}()
	return evs
}

func waitFor(t *testing.T, evs <-chan sgclient.LiveEvent, typ, ticket string, within time.Duration) sgclient.LiveEvent {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case ev, ok := <-evs:
			if !ok {
				t.Fatalf("the stream ended before %s %s", typ, ticket)
			}
			if ev.Type == typ && ev.Ticket == ticket {
				return ev
			}
		case <-deadline:
			t.Fatalf("no %s for %s within %v", typ, ticket, within)
		}
	}
}

// An "always" reply saves the ticket's patterns as grants of the project;
// the grants page lists them with who saved them, and a revoke made in the
// app records the operator.
func TestGrantsListAndRevoke(t *testing.T) {
	a := startApp(t)
	_, ticket := a.ask(t, "echo hi")
	c, csrf := a.signIn(t, tokenOne)
	same := map[string]string{"Sec-Fetch-Site": "same-origin", "X-CSRF-Token": csrf}
	if code, body := a.do(t, c, "POST", "/api/tickets/"+ticket+"/reply", `{"reply":"always"}`, same); code != 200 {
		t.Fatalf("always: %d %s", code, body)
	}
	code, body := a.do(t, c, "GET", "/api/grants?project=web-test", "", nil)
	var gs []sgclient.Grant
	if code != 200 || json.Unmarshal([]byte(body), &gs) != nil || len(gs) == 0 {
		t.Fatalf("GET /api/grants = %d %s", code, body)
	}
	g := gs[0]
	if g.Principal != "operator:ops-1" || g.Ticket != ticket || g.Project != "web-test" {
		t.Fatalf("grant = %+v", g)
	}
	if code, body := a.do(t, c, "POST", "/api/grants/"+g.ID+"/revoke", "", map[string]string{"Sec-Fetch-Site": "same-origin"}); code != http.StatusForbidden {
		t.Errorf("revoke without the CSRF token = %d %s, want 403", code, body)
	}
	code, body = a.do(t, c, "POST", "/api/grants/"+g.ID+"/revoke", "", same)
	var revoked sgclient.Grant
	if code != 200 || json.Unmarshal([]byte(body), &revoked) != nil || revoked.Revoked == nil || revoked.Revoked.Principal != "operator:ops-1" {
		t.Fatalf("revoke: %d %s, want the grant revoked by operator:ops-1", code, body)
	}
	gs, err := a.eng.Grants(context.Background(), sgclient.GrantsRequest{Project: "web-test"})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range gs {
		if x.ID == g.ID {
			t.Errorf("grant %s is still in force after the revoke: %+v", g.ID, x)
		}
	}
	if code, body := a.do(t, c, "POST", "/api/grants/01NOSUCHGRANT/revoke", "", same); code != 404 || !strings.Contains(body, sgclient.CodeGrantNotFound) {
		t.Errorf("unknown grant = %d %s", code, body)
	}
}

// GET /api/runs filters by status and agent.
func TestRunsFilter(t *testing.T) {
	a := startApp(t)
	run, _ := a.ask(t, "echo hi")
	auth := map[string]string{"Authorization": "Bearer " + tokenOne}
	for q, want := range map[string]bool{"": true, "?status=awaiting": true, "?status=ended": false, "?agent=build": true, "?agent=plan": false} {
		code, body := a.do(t, nil, "GET", "/api/runs"+q, "", auth)
		var runs []sgclient.RunSummary
		if code != 200 || json.Unmarshal([]byte(body), &runs) != nil {
			t.Fatalf("GET /api/runs%s = %d %s", q, code, body)
		}
		if got := len(runs) == 1 && runs[0].ID == run; got != want {
			t.Errorf("GET /api/runs%s = %s, want the run: %v", q, body, want)
		}
	}
}

// The session cookie cannot be read by a script nor sent cross-site; the
// pages carry a strict Content-Security-Policy; signing out ends the
// session on the server.
func TestSessionCookieAndHeaders(t *testing.T) {
	a := startApp(t)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest("POST", a.srv.URL+"/login", strings.NewReader("token="+tokenOne))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	cookie := res.Header.Get("Set-Cookie")
	for _, want := range []string{"sg_session=", "HttpOnly", "SameSite=Strict", "Path=/"} {
		if !strings.Contains(cookie, want) {
			t.Errorf("Set-Cookie %q lacks %s", cookie, want)
		}
	}
	if strings.Contains(cookie, "Secure") {
		t.Errorf("Set-Cookie %q is Secure without TLS", cookie)
	}
	res, err = c.Get(a.srv.URL + "/inbox")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(page), `<script src="/static/app.js"`) {
		t.Fatalf("GET /inbox = %d", res.StatusCode)
	}
	if csp := res.Header.Get("Content-Security-Policy"); csp != appCSP || !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "unsafe") {
		t.Errorf("CSP = %q", csp)
	}
	if res.Header.Get("X-Frame-Options") != "DENY" || res.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("headers = %v", res.Header)
	}
	for _, f := range []string{"app.js", "app.css", "index.html", "login.html", "login.js"} {
		b, err := assets.ReadFile("assets/" + f)
		if err != nil {
			t.Fatal(err)
		}
		for _, ext := range []string{"http://", "https://", "//fonts", "cdn", "innerHTML", "eval("} {
			if strings.Contains(string(b), ext) {
				t.Errorf("%s contains %q: the app loads nothing from outside and writes no markup from data", f, ext)
			}
		}
	}
	code, body := a.do(t, c, "GET", "/api/session", "", nil)
	var s sgclient.Session
	if json.Unmarshal([]byte(body), &s) != nil || code != 200 {
		t.Fatalf("session %d %s", code, body)
	}
	old := ""
	for _, ck := range res.Request.Cookies() {
		if ck.Name == sessionCookie {
			old = ck.Value
		}
	}
	if code, _ := a.do(t, c, "POST", "/logout", "", map[string]string{"X-CSRF-Token": s.CSRF}); code != http.StatusNoContent {
		t.Fatalf("logout = %d", code)
	}
	// The old cookie, replayed, is no session any more.
	if old == "" {
		t.Fatal("no session cookie sent")
	}
	if code, _ := a.do(t, nil, "GET", "/api/tickets", "", map[string]string{"Cookie": sessionCookie + "=" + old}); code != http.StatusUnauthorized {
		t.Errorf("a signed-out session's cookie = %d, want 401", code)
	}
}

// The API's statuses follow the engine's stable codes; a code this build
// does not list is still the engine's refusal, passed on, never internal.
func TestStatusOfCodes(t *testing.T) {
	for err, want := range map[error]struct {
		status int
		code   string
	}{
		sgclient.ErrTicketNotFound:                   {404, sgclient.CodeTicketNotFound},
		sgclient.ErrTicketResolved:                   {409, sgclient.CodeTicketResolved},
		sgclient.ErrInvalidRequest:                   {400, sgclient.CodeInvalidInput},
		sgclient.ErrUnavailable:                      {503, sgclient.CodeUnavailable},
		&sgclient.Error{Code: "edit_refused"}:        {422, "edit_refused"},
		&sgclient.Error{Code: sgclient.CodeInternal}: {500, sgclient.CodeInternal},
		fmt.Errorf("a failure without a code"):       {500, sgclient.CodeInternal},
	} {
		if status, code := statusOf(err); status != want.status || code != want.code {
			t.Errorf("statusOf(%v) = %d %s, want %d %s", err, status, code, want.status, want.code)
		}
	}
}

// A page that stops reading is dropped once it is a buffer behind (its
// EventSource connects again and reloads); the others keep every event.
func TestHubDropsASubscriberThatFallsBehind(t *testing.T) {
	h := newHub()
	slow, fast := h.subscribe(), h.subscribe()
	got := 0
	for i := range subscriberBuffer + 1 {
		h.publish(sgclient.LiveEvent{Type: sgclient.LiveRunChanged, Seq: uint64(i + 1)})
		<-fast
		got++
	}
	n := 0
	for range slow {
		n++
	}
	if n != subscriberBuffer || got != subscriberBuffer+1 {
		t.Fatalf("slow got %d before it was dropped, fast %d", n, got)
	}
	h.closeAll()
	if _, open := <-fast; open {
		t.Fatal("closeAll left a stream open")
	}
	h.unsubscribe(slow) // already dropped: no double close
}
