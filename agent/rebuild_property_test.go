package agent_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stepgate/stepgate/agent"
	"github.com/stepgate/stepgate/agent/model"
	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/executor/executortest"
	"pgregory.net/rapid"
)

// callKinds are the calls a generated turn makes: allowed, blocked by a
// rule, a tool not in the catalogue, arguments the schema refuses,
// arguments that are not JSON, a call that asks (approved or rejected
// with feedback).
var callKinds = [][2]string{
	{"echo", `{"text":"hello %d"}`},
	{"echo", `{"text":"deny %d"}`},
	{"no_such_tool", `{"n":%d}`},
	{"echo", `{"text":%d}`},
	{"echo", `{"text":"cut %d`},
	{"count_fx", `{"text":"ask %d"}`},
}

// The conversation rebuilt from the log alone (Conversation over show)
// after N turns is the conversation the loop held: the one it sent with
// its last request, and the model's final answer.
func TestConversationRebuildsFromTheLogProperty(t *testing.T) {
	var cnt executortest.Counts
	h := host(t, &cnt)
	api := commands.Wire{Host: h}
	loc := t.TempDir()
	rapid.Check(t, func(rt *rapid.T) {
		ctx := ctxT(t)
		n := rapid.IntRange(0, 4).Draw(rt, "turns")
		var script []model.Turn
		for i := 1; i <= n; i++ {
			var cs [][2]string
			for j := range rapid.IntRange(1, 3).Draw(rt, fmt.Sprintf("calls%d", i)) {
				k := callKinds[rapid.IntRange(0, len(callKinds)-1).Draw(rt, fmt.Sprintf("kind%d_%d", i, j))]
				cs = append(cs, [2]string{k[0], fmt.Sprintf(k[1], i*10+j)})
			}
			script = append(script, calls(i, rapid.SampledFrom([]string{"", "working", "é ✓"}).Draw(rt, fmt.Sprintf("text%d", i)), cs...))
		}
		final := answer(n+1, "done")
		m := &scripted{turns: func(k int, _ model.Conversation) (model.Turn, error) {
			if k <= n {
				return script[k-1], nil
			}
			return final, nil
		}}
		out := &answering{ctx: ctx, h: h, reject: rapid.Bool().Draw(rt, "reject")}
		req := settings("task")
		req.Location = loc
		res, err := agent.Start(ctx, agent.Config{API: api, Provider: m, Out: out}, req)
		if err != nil {
			rt.Fatal(err)
		}
		if out.err != nil {
			rt.Fatal(out.err)
		}
		sent := m.requests()
		held := sent[len(sent)-1].Conversation
		held.Exchanges = append(held.Exchanges, model.Exchange{Turn: final})
		r, err := api.Show(ctx, client.ShowRequest{Run: res.Run})
		if err != nil {
			rt.Fatal(err)
		}
		st, err := agent.Conversation(r)
		if err != nil {
			rt.Fatal(err)
		}
		if d := cmp.Diff(held, st.Conversation); d != "" {
			rt.Fatalf("rebuilt conversation (-held +rebuilt):\n%s", d)
		}
		if st.Phase != agent.Ended || len(sent) != n+1 {
			rt.Fatalf("phase %v after %d requests, want ended after %d", st.Phase, len(sent), n+1)
		}
	})
}

// answering is an Output that answers every ticket the loop waits on,
// as it waits (approved once, or rejected with feedback), so the loop goes
// on; it is called on the loop's goroutine before the loop awaits.
type answering struct {
	quiet
	ctx    context.Context
	h      *commands.Host
	reject bool
	err    error
}

func (a *answering) Waiting(run string, step int, ts []agent.Ticket) {
	a.quiet.Waiting(run, step, ts)
	for _, tk := range ts {
		reply := commands.ReplyRequest{Ticket: tk.ID, Reply: "once", Principal: "test"}
		if a.reject {
			reply = commands.ReplyRequest{Ticket: tk.ID, Reply: "reject", Message: "not now: use echo", Principal: "test"}
		}
		if _, err := a.h.Reply(a.ctx, reply); err != nil && a.err == nil && !errors.Is(err, commands.ErrTicketResolved) {
			a.err = err
		}
	}
}
