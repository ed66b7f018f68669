package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/internal/syncbuf"
)

// servedWeb is `engine serve --http` in process: the NATS URL, the app's
// URL and the operator's token.
type servedWeb struct {
	nats, app, token string
}

// serveWeb runs `engine serve --http 127.0.0.1:0` with operator ops-1 in
// the user's file (XDG_CONFIG_HOME), until t ends.
func serveWeb(t *testing.T) *servedWeb {
	t.Helper()
	home := t.TempDir()
	token := "sgop_browser-test-token"
	if err := os.MkdirAll(filepath.Join(home, "stepgate"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "stepgate", "config.yaml"), []byte(config.OperatorLine("ops-1", token)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CONFIG_HOME", home)
	ctx, cancel := context.WithCancel(context.Background())
	var out, errs syncbuf.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--data", t.TempDir(), "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0", "--lease", "0", "--test-tools"}, &out, &errs)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v; stderr: %s", err, errs.String())
			}
		case <-time.After(20 * time.Second):
			t.Errorf("serve did not stop within 20s")
		}
	})
	natsRe := regexp.MustCompile(`serving on (nats://[0-9.:]+), data`)
	appRe := regexp.MustCompile(`operators' inbox on (http://[0-9.:]+/)`)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		n, a := natsRe.FindStringSubmatch(out.String()), appRe.FindStringSubmatch(out.String())
		if n != nil && a != nil {
			return &servedWeb{nats: n[1], app: a[1], token: token}
		}
		select {
		case err := <-done:
			t.Fatalf("serve stopped: %v; stdout: %s stderr: %s", err, out.String(), errs.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("serve did not say where it listens: %s %s", out.String(), errs.String())
	return nil
}

// newAppBrowser is a headless Chromium that reaches nothing but loopback:
// every host name resolves to nothing and every request other than to
// loopback goes to a proxy on a dead port.
func newAppBrowser(t *testing.T) *browser {
	t.Helper()
	b := launchBrowser(t, "the web app", 2*time.Minute, 1000,
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
		chromedp.ProxyServer("http://127.0.0.1:9"), // loopback bypasses it: the app only
	)
	b.refuseOutside(t)
	return b
}

// do runs chromedp actions, bounded to d.
func (b *browser) do(t *testing.T, d time.Duration, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, d)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// until waits until the page's expression is true.
func until(expr string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		_, err := chromedp.Poll[bool](expr, chromedp.WithPollingInterval(25*time.Millisecond), chromedp.WithPollingTimeout(0))(ctx, tg)
		return chromedp.Void{}, err
	}
}

// scriptRun is an `engine run --wait` in process whose one bash call asks.
type scriptRun struct {
	command string
	out     syncbuf.Buffer
	done    chan error
}

func startScriptRun(t *testing.T, ctx context.Context, natsURL, command string) *scriptRun {
	t.Helper()
	return startCallRun(t, ctx, natsURL, t.TempDir(), "bash", map[string]any{"command": command})
}

// startCallRun is an `engine run --wait` in dir whose one call of tool asks
// (a run rule: tool "*" ask), after the steps before, each one call (tool
// and args), which do not ask.
func startCallRun(t *testing.T, ctx context.Context, natsURL, dir, tool string, args map[string]any, before ...map[string]any) *scriptRun {
	t.Helper()
	script := filepath.Join(t.TempDir(), "script.jsonl")
	var lines []byte
	for i, call := range append(before, map[string]any{"tool": tool, "args": args}) {
		call["id"] = fmt.Sprint("c", i+1)
		line, _ := json.Marshal(map[string]any{"calls": []any{call}})
		lines = append(append(lines, line...), '\n')
	}
	line := bytes.TrimSpace(lines[bytes.LastIndexByte(lines[:len(lines)-1], '\n')+1:])
	if err := os.WriteFile(script, lines, 0o600); err != nil {
		t.Fatal(err)
	}
	rules := filepath.Join(t.TempDir(), "rules.json")
	if err := os.WriteFile(rules, []byte(`[{"action":"`+tool+`","resource":"*","effect":"ask"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := &scriptRun{command: string(line), done: make(chan error, 1)}
	var errs syncbuf.Buffer
	go func() {
		r.done <- run(ctx, []string{"run", "--nats", natsURL, "--script", script, "--rules", rules, "--location", dir, "--wait", "--json"}, &r.out, &errs)
	}()
	return r
}

// finished waits for the run's script to end and returns what it printed.
func (r *scriptRun) finished(t *testing.T) string {
	t.Helper()
	select {
	case err := <-r.done:
		if err != nil {
			t.Fatalf("engine run (%s): %v", r.command, err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("engine run (%s) did not finish within 30s", r.command)
	}
	return r.out.String()
}

// The inbox in a real Chromium, against `engine serve --http`: tickets
// raised by `engine run` appear; approving one there (keyboard) runs the
// call and the run finishes, recording operator:ops-1; a card's context
// says where its run's earlier calls ran; a reject with a
// message reaches the model; a ticket answered with the CLI leaves the open
// page within a second; an edited approval runs the edited call; the run
// page shows the run's timeline, with the host that ran the call. The page
// asks nothing but the app.
func TestInboxInChromium(t *testing.T) {
	sw := serveWeb(t)
	b := newAppBrowser(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	api, err := sgclient.Dial(sw.nats, sgclient.WithTimeout(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer api.Close()

	b.do(t, 20*time.Second, "sign in",
		chromedp.Navigate(sw.app+"inbox"), // no session: the sign-in form
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), "sgop_wrong"),
		chromedp.Click(chromedp.ID("signin")),
		chromedp.WaitVisible(chromedp.ID("failed")), // a wrong token: told so, no session
		chromedp.SendKeys(chromedp.ID("token"), sw.token),
		chromedp.Click(chromedp.ID("signin")),
		chromedp.WaitVisible(chromedp.ID("page-inbox")),
	)
	if who := eval[string](t, b, `document.getElementById("who").textContent`); who != "operator:ops-1" {
		t.Fatalf("signed in as %q", who)
	}

	runs := map[string]*scriptRun{}
	for _, name := range []string{"approve", "always", "reject", "cli"} {
		cmd := "echo " + name + "-original"
		if name == "reject" { // a model's hostile string is shown as text
			cmd += ` '<b id=pwn>x</b>'`
		}
		runs[name] = startScriptRun(t, ctx, sw.nats, cmd)
	}
	// A run whose ticket comes after a step that ran: its card's context
	// says where that step's call ran.
	runs["live"] = startCallRun(t, ctx, sw.nats, t.TempDir(), "bash", map[string]any{"command": "echo live-original"},
		map[string]any{"tool": "echo", "args": map[string]any{"text": "live-context"}})
	// An edit of a file, to be edited again before it is approved.
	editDir := t.TempDir()
	notes := filepath.Join(editDir, "notes.txt")
	if err := os.WriteFile(notes, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runs["edit"] = startCallRun(t, ctx, sw.nats, editDir, "edit", map[string]any{"path": "notes.txt", "oldString": "hello", "newString": "hello edit-original"})
	// An edit to approve always with a narrowed pattern (an edit saves "*").
	narrowDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(narrowDir, "notes.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runs["narrow"] = startCallRun(t, ctx, sw.nats, narrowDir, "edit", map[string]any{"path": "notes.txt", "oldString": "hello", "newString": "hello narrow-original"})
	b.do(t, 20*time.Second, "seven tickets in the inbox", until(`document.querySelectorAll("li.ticket").length === 7`))
	page, err := api.Tickets(ctx, sgclient.TicketsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	ticketOf := map[string]sgclient.TicketView{}
	for _, tk := range page.Tickets {
		for name := range runs {
			if strings.Contains(string(tk.Args), name+"-original") {
				ticketOf[name] = tk
			}
		}
	}
	if len(ticketOf) != 7 {
		t.Fatalf("tickets = %+v", page.Tickets)
	}
	card := func(name string) string { return fmt.Sprintf(`li.ticket[data-ticket=%q]`, ticketOf[name].ID) }
	b.do(t, 10*time.Second, "each ticket shows its call", until(`[...document.querySelectorAll("li.ticket .args")].every(e => /echo \w+-original|hello \w+-original/.test(e.textContent)) && document.querySelector("li.ticket .covers").textContent.includes("Approve always")`))
	if diff := eval[string](t, b, `document.querySelector('`+card("edit")+` .args .diff').textContent`); diff != "- hello+ hello edit-original" {
		t.Errorf("the edit's diff reads %q", diff)
	}
	if !eval[bool](t, b, `document.getElementById("pwn") === null && document.body.textContent.includes("'<b id=pwn>x</b>'")`) {
		t.Errorf("a string of the model's became markup in the inbox")
	}
	b.screenshot(t, "inbox.png", false)

	// The keyboard: ? shows the shortcuts, Esc hides them, j and k move.
	b.do(t, 5*time.Second, "? and Esc", chromedp.KeyEvent("?"), until(`!document.getElementById("help").hidden`),
		chromedp.KeyEvent("\x1b"), until(`document.getElementById("help").hidden`))
	b.do(t, 5*time.Second, "j and k", chromedp.KeyEvent("j"), until(`document.querySelectorAll("li.ticket")[1].classList.contains("selected")`),
		chromedp.KeyEvent("k"), until(`document.querySelectorAll("li.ticket")[0].classList.contains("selected")`))

	// The context of a card: the run's last steps, each call with where it
	// ran (the host the log says executed it).
	live, err := api.Show(ctx, sgclient.ShowRequest{Run: ticketOf["live"].Run})
	if err != nil {
		t.Fatal(err)
	}
	ranOn := live.Steps[0].Calls[0].RanOn
	if ranOn == "" || ranOn != live.Steps[0].Host {
		t.Fatalf("the live run's first call ran on %q; want the host that settled it, %q", ranOn, live.Steps[0].Host)
	}
	b.do(t, 10*time.Second, "a card's context says where its run's calls ran", chromedp.Click(chromedp.CSS(card("live")+" .head .tool")),
		until(`document.querySelector('`+card("live")+` .context').textContent.includes("live-context")`))
	cardContext := eval[string](t, b, `document.querySelector('`+card("live")+` .context li').textContent`)
	t.Logf("the live card's context: %q", cardContext)
	if !strings.HasSuffix(cardContext, " · ran on "+ranOn) {
		t.Errorf("the live card's context reads %q; want it to say the call ran on %s", cardContext, ranOn)
	}

	// Approve with the keyboard: select the card, press a.
	b.do(t, 10*time.Second, "approve with a", chromedp.Click(chromedp.CSS(card("approve")+" .head .tool")), chromedp.KeyEvent("a"))
	if out := runs["approve"].finished(t); !strings.Contains(out, "approve-original") {
		t.Errorf("the approved run printed %s, want the call's output", out)
	}
	shown, err := api.Show(ctx, sgclient.ShowRequest{Run: ticketOf["approve"].Run})
	if err != nil {
		t.Fatal(err)
	}
	if res := shown.Ticket(ticketOf["approve"].ID).Resolution; shown.Status != sgclient.StatusEnded || res == nil || !res.Approved || res.Principal != "operator:ops-1" {
		t.Fatalf("approved run: status %s, resolution %+v", shown.Status, res)
	}
	b.do(t, 5*time.Second, "the approved ticket leaves the list", chromedp.WaitNotPresent(chromedp.CSS(card("approve"))))

	// Approve once is the primary action: the first button, filled; always
	// looks like the others.
	if !eval[bool](t, b, `(() => { const c = document.querySelector('`+card("always")+`'); const first = c.querySelector(".actions button");
		const bg = (s) => getComputedStyle(c.querySelector(s)).backgroundColor;
		return first.classList.contains("once") && first.classList.contains("primary") && bg(".once") !== bg(".always") && bg(".always") === bg(".reject"); })()`) {
		t.Errorf("approve once is not the primary action")
	}
	// Approve always with A shows the exact grant it saves (action, pattern,
	// project), with the pattern to narrow; nothing is saved yet.
	always := ticketOf["always"]
	if len(always.Requests) != 1 || len(always.Requests[0].Save) != 1 {
		t.Fatalf("the always ticket's requests = %+v, want one saving one pattern", always.Requests)
	}
	save := always.Requests[0].Save[0]
	b.do(t, 10*time.Second, "approve always with A shows the grant", chromedp.Click(chromedp.CSS(card("always")+" .head .tool")), chromedp.KeyEvent("A"),
		until(`!document.querySelector('`+card("always")+` .always-panel').hidden`))
	shownGrant := eval[[]string](t, b, `(() => { const c = document.querySelector('`+card("always")+`');
		return [c.querySelector(".grant-project").textContent, c.querySelector(".grant-action").textContent, c.querySelector(".grant-pattern").value]; })()`)
	if diff := cmp.Diff([]string{always.Project, "bash", save}, shownGrant); diff != "" {
		t.Errorf("the grant approve always shows (project, action, pattern) (-want +got):\n%s", diff)
	}
	b.screenshot(t, "always.png", false)
	if st, err := api.Show(ctx, sgclient.ShowRequest{Run: always.Run}); err != nil || st.Ticket(always.ID).Resolution != nil {
		t.Fatalf("pressing A answered the ticket: %v", err)
	}
	// A wider pattern posted straight to the API is refused, whatever a
	// page would have checked; the ticket still waits.
	eval[bool](t, b, `window.wide = null; (async () => { const s = await (await fetch("/api/session")).json();
			const r = await fetch("/api/tickets/`+always.ID+`/reply", {method: "POST", credentials: "same-origin",
				headers: {"Content-Type": "application/json", "X-CSRF-Token": s.csrf}, body: JSON.stringify({reply: "always", pattern: "*"})});
			window.wide = r.status + " " + await r.text(); })(); true`)
	b.do(t, 10*time.Second, "a wider pattern posted to the API", until(`window.wide !== null`))
	if wide := eval[string](t, b, `window.wide`); !strings.HasPrefix(wide, "400 ") || !strings.Contains(wide, "invalid_input") || !strings.Contains(wide, "not narrower") {
		t.Errorf("a wider pattern: %s, want 400 invalid_input, not narrower", wide)
	}
	if st, err := api.Show(ctx, sgclient.ShowRequest{Run: always.Run}); err != nil || st.Ticket(always.ID).Resolution != nil {
		t.Fatalf("the refused wider pattern answered the ticket: %v", err)
	}
	// Saved as shown, the grant is the ticket's save pattern.
	b.do(t, 10*time.Second, "save the grant shown", chromedp.Click(chromedp.CSS(card("always")+" .always-save")))
	runs["always"].finished(t)
	if gs, err := api.Grants(ctx, sgclient.GrantsRequest{Project: always.Project}); err != nil || len(gs) != 1 || gs[0].Action != "bash" || gs[0].Resource != save {
		t.Fatalf("grants after the always = %+v %v, want bash %q", gs, err, save)
	}
	// An edit saves "*", the whole project; narrowed in the page to the
	// one file, the grant saved is that pattern.
	narrow := ticketOf["narrow"]
	b.do(t, 10*time.Second, "narrow and save",
		chromedp.Click(chromedp.CSS(card("narrow")+" .always")),
		until(`!document.querySelector('`+card("narrow")+` .always-panel').hidden && document.querySelector('`+card("narrow")+` .grant-pattern').value === "*"`),
		chromedp.SetValue(chromedp.CSS(card("narrow")+" .grant-pattern"), "notes.txt"),
		chromedp.Click(chromedp.CSS(card("narrow")+" .always-save")))
	runs["narrow"].finished(t)
	gs, err := api.Grants(ctx, sgclient.GrantsRequest{Project: narrow.Project})
	if err != nil || len(gs) != 1 || gs[0].Action != "edit" || gs[0].Resource != "notes.txt" {
		t.Fatalf("grants after the narrowed always = %+v %v, want edit notes.txt", gs, err)
	}
	if _, err := api.RevokeGrant(ctx, sgclient.RevokeRequest{ID: gs[0].ID, Principal: "ops-1"}); err != nil {
		t.Fatal(err)
	}

	// Reject with a message.
	b.do(t, 10*time.Second, "reject with a message",
		chromedp.SendKeys(chromedp.CSS(card("reject")+" .message"), "use ls instead"),
		chromedp.Click(chromedp.CSS(card("reject")+" .reject")))
	if out := runs["reject"].finished(t); !strings.Contains(out, "The user rejected this call: use ls instead") {
		t.Errorf("the rejected run printed %s, want the message in the call's result", out)
	}

	// Answered with the CLI: the open page drops it without a reload.
	var cliOut, cliErr syncbuf.Buffer
	if err := run(ctx, []string{"approve", ticketOf["cli"].ID, "--nats", sw.nats, "--as", "ops-2"}, &cliOut, &cliErr); err != nil {
		t.Fatalf("engine approve: %v %s", err, cliErr.String())
	}
	start := time.Now()
	b.do(t, time.Second, "the ticket answered with the CLI leaves the open page within a second", chromedp.WaitNotPresent(chromedp.CSS(card("cli"))))
	t.Logf("the ticket answered with the CLI left the page %v after engine approve returned", time.Since(start))
	runs["cli"].finished(t)

	// Edit, then approve: the page sends the edited arguments.
	edited := `{"path": "notes.txt", "oldString": "hello", "newString": "hello edit-changed"}`
	b.do(t, 10*time.Second, "edit then approve",
		chromedp.Click(chromedp.CSS(card("edit")+" .edit")),
		chromedp.SetValue(chromedp.CSS(card("edit")+" .edit-args"), edited),
		chromedp.Click(chromedp.CSS(card("edit")+" .edit-once")),
		until(`!document.querySelector('`+card("edit")+`') || document.querySelector('`+card("edit")+` .error').textContent !== ""`))
	if msg := eval[string](t, b, `(document.querySelector('`+card("edit")+` .error') || {}).textContent || ""`); msg != "" {
		t.Fatalf("the edited approval was refused: %s", msg)
	}
	editOut := runs["edit"].finished(t)

	// The grants page: the saved approval, who saved it; revoke it there.
	b.do(t, 20*time.Second, "the grants page",
		chromedp.Navigate(sw.app+"grants"),
		until(`[...document.querySelectorAll("h3")].some(h => h.textContent === "project `+ticketOf["always"].Project+`") && document.querySelector("[data-grant] .by").textContent.includes("saved by operator:ops-1")`),
		chromedp.Click(chromedp.CSS("[data-grant] button.revoke")),
		until(`document.querySelector("[data-grant]") === null && document.getElementById("grants").textContent.includes("No saved approvals.")`))
	if gs, err := api.Grants(ctx, sgclient.GrantsRequest{Project: ticketOf["always"].Project}); err != nil || len(gs) != 0 {
		t.Fatalf("grants in force after the revoke = %+v %v, want none", gs, err)
	}

	// The run page: the report's timeline of the approved run, with the
	// reply's principal.
	b.do(t, 20*time.Second, "the run page",
		chromedp.Navigate(sw.app+"runs/"+ticketOf["approve"].Run),
		until(`(() => { const d = document.getElementById("run-frame").contentDocument; return d && d.body && d.body.textContent.includes("by operator:ops-1") && d.querySelectorAll("section.step").length === 1 && document.getElementById("run-status").textContent.startsWith("ended"); })()`))
	if ran := shown.Steps[0].Calls[0].RanOn; ran == "" || !eval[bool](t, b, `document.getElementById("run-frame").contentDocument.querySelector("section.step .call .ran-on").textContent === `+strconv.Quote(ran)) {
		t.Errorf("the run page does not say the approved call ran on %q", ran)
	}
	b.screenshot(t, "run.png", false)

	// A run page is live: the waiting run's page shows the reply made
	// elsewhere without a reload.
	b.do(t, 20*time.Second, "the waiting run's page",
		chromedp.Navigate(sw.app+"runs/"+ticketOf["live"].Run),
		until(`(() => { const d = document.getElementById("run-frame").contentDocument; return d && d.body && d.body.textContent.includes("pending"); })()`))
	if _, err := api.Reply(ctx, sgclient.ReplyRequest{Ticket: ticketOf["live"].ID, Reply: "once", Principal: "ops-2"}); err != nil {
		t.Fatal(err)
	}
	b.do(t, 5*time.Second, "the run page follows the run",
		until(`(() => { const d = document.getElementById("run-frame").contentDocument; return d && d.body && d.body.textContent.includes("once by ops-2"); })()`))
	runs["live"].finished(t)

	b.mu.Lock()
	for _, u := range b.requests {
		if !strings.HasPrefix(u, sw.app) {
			t.Errorf("the page asked %s, outside the app", u)
		}
	}
	b.mu.Unlock()

	t.Run("edit-then-approve", func(t *testing.T) {
		got, err := os.ReadFile(notes)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != "hello edit-changed\n" {
			t.Fatalf("notes.txt = %q after the edited approval, want the edited call's content; the run printed %s", got, editOut)
		}
		if !strings.Contains(editOut, "The user changed the arguments of this call before approving it") {
			t.Errorf("the model was not told its arguments were changed; the run printed %s", editOut)
		}
		t.Logf("the edited call ran: %s", strings.TrimSpace(editOut))
	})
}
