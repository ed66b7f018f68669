package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/stepgate/stepgate/commands"
)

// cliRun drives run r with an `engine run` process; an asking one waits for
// the answers (await_step), which replyToCLITickets gives.
func (m *multi) cliRun(url, ws string, r int, asking bool) string {
	dir := m.t.TempDir()
	var script strings.Builder
	for n := 1; n <= mhSteps; n++ {
		text := fmt.Sprintf("cli %d step %d", r, n)
		if asking && n%mhAskEvery == 0 {
			text = "ask " + text
		}
		fmt.Fprintf(&script, `{"calls":[{"id":"c%d","tool":"echo_fx","args":{"text":%q}}]}`+"\n", n, text)
	}
	scriptPath := filepath.Join(dir, "script.jsonl")
	args := []string{"run", "--nats", url, "--script", scriptPath, "--location", ws, "--json"}
	if asking {
		rules, _ := json.Marshal(askRule)
		if err := os.WriteFile(filepath.Join(dir, "rules.json"), rules, 0o600); err != nil {
			m.t.Error(err)
		}
		args = append(args, "--rules", filepath.Join(dir, "rules.json"), "--wait")
	}
	if err := os.WriteFile(scriptPath, []byte(script.String()), 0o600); err != nil {
		m.t.Error(err)
	}
	cmd := exec.Command(engineBin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		m.fail("engine run %d: %v\n%s", r, err, stderr.String())
	}
	var run string
	finals := 0
	for sc := bufio.NewScanner(&stdout); sc.Scan(); {
		var line struct {
			Run     string `json:"run"`
			Event   string `json:"event"`
			Final   bool   `json:"final"`
			Results []commands.CallResult
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			m.fail("engine run %d printed %q: %v", r, sc.Text(), err)
			continue
		}
		if line.Event == "started" {
			run = line.Run
		}
		if line.Final {
			finals++
		}
	}
	if finals != mhSteps {
		m.fail("engine run %d printed %d final steps, want %d:\n%s", r, finals, mhSteps, stdout.String())
	}
	return run
}

// replyToCLITickets answers, until stopped, the tickets of the `engine run`
// processes' runs (the nats-client runs answer their own).
func (m *multi) replyToCLITickets() (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		answered := map[string]bool{}
		for {
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
			var pending commands.TicketPage
			if err := m.request("tickets", commands.TicketsRequest{Limit: commands.MaxTicketsLimit}, &pending); err != nil {
				m.fail("tickets: %v", err)
				continue
			}
			for _, tk := range pending.Tickets {
				if answered[tk.ID] || !strings.Contains(string(tk.Args), `"ask cli `) {
					continue
				}
				answered[tk.ID] = true
				var res commands.ReplyResult
				if err := m.request("reply", commands.ReplyRequest{Ticket: tk.ID, Reply: "once", Principal: "ops"}, &res); err != nil {
					m.fail("reply to %s: %v", tk.ID, err)
				}
				m.replies.Add(1)
			}
		}
	})
	return func() { close(done); wg.Wait() }
}
