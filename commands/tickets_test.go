package commands_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/step/steptest"
)

// walk asks for every page of req and returns the tickets' ids in the
// order the pages gave them, and how many pages there were.
func walk(t *testing.T, h *commands.Host, req commands.TicketsRequest) (ids []string, pages int) {
	t.Helper()
	for {
		page, err := h.Tickets(ctxT(t), req)
		if err != nil {
			t.Fatalf("tickets %+v: %v", req, err)
		}
		pages++
		for _, tv := range page.Tickets {
			ids = append(ids, tv.ID)
		}
		if page.Next == "" {
			return ids, pages
		}
		if len(page.Tickets) != req.Limit {
			t.Fatalf("a page of %d before the last, limit %d", len(page.Tickets), req.Limit)
		}
		req = commands.TicketsRequest{Limit: req.Limit, Cursor: page.Next} // the cursor carries the query
	}
}

// Tickets come in pages, oldest first, each once; filters by project, tool,
// run and age select what they say, and a cursor continues its own query.
func TestTicketsPages(t *testing.T) {
	s := steptest.Start(t, "")
	var cnt counter
	clock := &fakeClock{now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	h := startHostCfg(t, s, registry(t, &cnt), commands.Config{Host: "h1", Clock: clock.Now})
	ctx := ctxT(t)
	var all, p2, runs []string
	for i := range 7 {
		project := []string{"p1", "p2"}[i%2]
		run, out := awaiting(t, h, project, call("a", "count_fx", text{"ask a"}), call("b", "count_fx", text{"ask b"}))
		runs = append(runs, run)
		for _, tv := range out.Tickets {
			all = append(all, tv.ID)
			if project == "p2" {
				p2 = append(p2, tv.ID)
			}
		}
		clock.advance(time.Minute)
	}
	slices.Sort(all)
	slices.Sort(p2)

	first, err := h.Tickets(ctx, commands.TicketsRequest{})
	if err != nil || len(first.Tickets) != len(all) || first.Next != "" {
		t.Fatalf("default page: %d tickets, next %q, %v; want all %d and no next", len(first.Tickets), first.Next, err, len(all))
	}
	if got, pages := walk(t, h, commands.TicketsRequest{Limit: 3}); !slices.Equal(got, all) || pages != 5 {
		t.Errorf("pages of 3: %v in %d pages, want %v in 5", got, pages, all)
	}
	if got, _ := walk(t, h, commands.TicketsRequest{Project: "p2", Limit: 2}); !slices.Equal(got, p2) {
		t.Errorf("project p2 in pages of 2: %v, want %v", got, p2)
	}
	if got, _ := walk(t, h, commands.TicketsRequest{Run: runs[3], Limit: 1}); len(got) != 2 {
		t.Errorf("run %s: %v, want its 2 tickets", runs[3], got)
	}
	if got, _ := walk(t, h, commands.TicketsRequest{Tool: "count_fx", Limit: 100}); !slices.Equal(got, all) {
		t.Errorf("tool count_fx: %v, want all", got)
	}
	if got, _ := walk(t, h, commands.TicketsRequest{Tool: "read", Limit: 100}); len(got) != 0 {
		t.Errorf("tool read: %v, want none", got)
	}
	// The clock is 7 minutes past the first run: runs 0 to 3 asked more than 3m30s ago.
	if got, _ := walk(t, h, commands.TicketsRequest{OlderThan: "3m30s", Limit: 4}); !slices.Equal(got, all[:8]) {
		t.Errorf("older than 3m30s: %v, want the 8 oldest", got)
	}

	page, err := h.Tickets(ctx, commands.TicketsRequest{Project: "p2", Limit: 2})
	if err != nil || page.Next == "" {
		t.Fatalf("first page of p2: %+v, %v", page, err)
	}
	for _, bad := range []commands.TicketsRequest{
		{Limit: commands.MaxTicketsLimit + 1}, {Limit: -1}, {OlderThan: "soon"}, {OlderThan: "-1h"},
		{Cursor: "not a cursor"}, {Cursor: page.Next[:len(page.Next)-3]}, {Cursor: page.Next, Project: "p1"},
	} {
		if _, err := h.Tickets(ctx, bad); !errors.Is(err, commands.ErrInvalidRequest) || commands.Code(err) != commands.CodeInvalidInput {
			t.Errorf("tickets %+v: %v (code %q), want invalid_input", bad, err, commands.Code(err))
		}
	}
	if again, err := h.Tickets(ctx, commands.TicketsRequest{Cursor: page.Next, Project: "p2", Limit: 2}); err != nil || len(again.Tickets) != 2 {
		t.Errorf("a cursor with its own project repeated: %+v, %v", again, err)
	}
	one, err := h.Tickets(ctx, commands.TicketsRequest{Ticket: all[5]})
	if err != nil || len(one.Tickets) != 1 || one.Tickets[0].ID != all[5] || one.Next != "" {
		t.Errorf("ticket %s alone: %+v, %v", all[5], one, err)
	}
	// A ticket named alone passes the other filters as a page would: the
	// newest is not older than 3m30s, nor of project p1 when it is p2's.
	for _, req := range []commands.TicketsRequest{{Ticket: all[len(all)-1], OlderThan: "3m30s"}, {Ticket: p2[0], Project: "p1"}} {
		if got, err := h.Tickets(ctx, req); err != nil || len(got.Tickets) != 0 {
			t.Errorf("tickets %+v: %+v, %v; want none", req, got, err)
		}
	}
}
