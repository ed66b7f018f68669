package integration

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/stepgate/stepgate/commands"
)

// codeNoExecutor is the service error code of a step whose location has no
// live holder.
const codeNoExecutor = "no_executor"

// answer is what one request to the service got: the decoded result, a
// service error code with its message, or no answer at all (err).
type answer struct {
	code, msg string
	err       error
}

// askService sends one request through the queue group, waits up to
// timeout, and decodes a result into out.
func askService(nc *nats.Conn, endpoint string, req any, timeout time.Duration, out any) answer {
	b, _ := json.Marshal(req)
	msg, err := nc.Request("stepgate."+endpoint, b, timeout)
	if err != nil {
		return answer{err: err}
	}
	if code := msg.Header.Get(micro.ErrorCodeHeader); code != "" {
		return answer{code: code, msg: msg.Header.Get(micro.ErrorHeader)}
	}
	if err := json.Unmarshal(msg.Data, out); err != nil {
		return answer{err: fmt.Errorf("%s: %w", endpoint, err)}
	}
	return answer{}
}

// waited reports an answer that is no answer: the request found no host or
// none answered in time.
func (a answer) waited() bool {
	return errors.Is(a.err, nats.ErrTimeout) || errors.Is(a.err, nats.ErrNoResponders)
}

// bashCall is a call of the bash tool.
func bashCall(id, command string) commands.CallRequest {
	b, _ := json.Marshal(map[string]string{"command": command})
	return commands.CallRequest{ID: id, Tool: "bash", Args: b}
}

// hold is the shell that waits while the file hold exists in the location
// and then goes on only if its engine ($PPID) lives: a call left behind by
// a killed engine ends there, as it would with its machine.
const hold = `while [ -e hold ]; do kill -0 $PPID 2>/dev/null || exit 0; sleep 0.05; done; kill -0 $PPID 2>/dev/null || exit 0`

// careful drives one run like a careful model: it sends a step again when
// nobody answered or the answer was no_executor; a call whose result says
// it did not run is made again; a call whose outcome is indeterminate is
// checked against the effects file in the location (seen through src) and
// made again only when its line is missing.
type careful struct {
	t        *testing.T
	nc       *nats.Conn
	run      string
	effects  string // the effects file on the real filesystem
	next     int    // the run's next step
	waits    int    // requests nobody answered
	noExec   int    // no_executor answers
	redone   int    // effects made again
	inDoubt  int    // indeterminate outcomes
	noLoc    int    // results naming no_location
	lastNote string // the last no_executor message
}

// effectLines counts the lines of the effects file.
func (d *careful) effectLines() map[string]int {
	d.t.Helper()
	return lines(d.t, filepath.Dir(d.effects), filepath.Base(d.effects))
}

// submit sends step n with one call until it is final and returns its
// result; deadline bounds the whole (a hang, not a timing).
func (d *careful) submit(n int, call commands.CallRequest) commands.CallResult {
	d.t.Helper()
	req := commands.SubmitStepRequest{Run: d.run, Step: n, Calls: []commands.CallRequest{call}}
	for deadline := time.Now().Add(90 * time.Second); ; {
		if time.Now().After(deadline) {
			d.t.Fatalf("run %s step %d: not final after 90s (%d waits, %d no_executor: %s)", d.run, n, d.waits, d.noExec, d.lastNote)
		}
		var out commands.StepOutcome
		a := askService(d.nc, "submit_step", req, 3*time.Second, &out)
		switch {
		case a.waited():
			d.waits++
			continue
		case a.code == codeNoExecutor:
			d.noExec++
			d.lastNote = a.msg
			time.Sleep(100 * time.Millisecond)
			continue
		case a.code == commands.CodeUnavailable || a.code == commands.CodeAwaitTimeout ||
			a.code == commands.CodeConflict && strings.Contains(a.msg, "still being settled"):
			d.waits++
			time.Sleep(50 * time.Millisecond)
			continue
		case a.code != "" || a.err != nil:
			d.t.Fatalf("run %s step %d: %s %s %v", d.run, n, a.code, a.msg, a.err)
		}
		if !out.Final || len(out.Results) != 1 {
			d.t.Fatalf("run %s step %d: %+v, want final with one result", d.run, n, out)
		}
		return out.Results[0]
	}
}

// effect makes effect e happen exactly once: it submits call (the run's
// next step), and again the plain `echo e >> effects` while the outcome
// says the call did not run or is indeterminate and the line is missing.
func (d *careful) effect(e int, call commands.CallRequest) {
	d.t.Helper()
	line := strconv.Itoa(e)
	for try := 0; ; try++ {
		if try > 5 {
			d.t.Fatalf("run %s: effect %d not made in %d tries", d.run, e, try)
		}
		res := d.submit(d.next, call)
		d.next++
		switch {
		case strings.Contains(res.Content, "no_location"):
			d.noLoc++
			d.t.Errorf("run %s step %d: the call ran where its location is not: %q", d.run, d.next-1, res.Content)
		case strings.Contains(res.Content, commands.IndeterminateResult):
			d.inDoubt++
			if d.effectLines()[line] > 0 {
				return
			}
		case strings.Contains(res.Content, commands.LeaseLostResult):
		case res.IsError:
			d.t.Errorf("run %s step %d: %q", d.run, d.next-1, res.Content)
		default:
			return
		}
		d.redone++
		call = bashCall(fmt.Sprintf("e%d-%d", e, try+1), fmt.Sprintf("echo %d >> effects.txt", e))
	}
}

// exactlyOnce checks that the effects file holds 1..n, each once.
func (d *careful) exactlyOnce(n int) {
	d.t.Helper()
	got := d.effectLines()
	for e := 1; e <= n; e++ {
		if c := got[strconv.Itoa(e)]; c != 1 {
			d.t.Errorf("run %s: effect %d happened %d times, want once", d.run, e, c)
		}
	}
	if len(got) != n {
		b, _ := os.ReadFile(d.effects)
		d.t.Errorf("run %s: effects file holds %d distinct lines, want %d:\n%s", d.run, len(got), n, b)
	}
}

// noneOpen checks that every step of the run is final, as a host shows it.
func (d *careful) noneOpen() {
	d.t.Helper()
	r := showRun(d.t, d.nc, d.run)
	if len(r.Steps) != d.next-1 {
		d.t.Errorf("run %s shows %d steps, the driver made %d", d.run, len(r.Steps), d.next-1)
	}
	for _, s := range r.Steps {
		if !s.Final {
			d.t.Errorf("run %s: step %d is left open", d.run, s.N)
		}
	}
}
