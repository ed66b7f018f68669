package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stepgate/stepgate/commands"
)

// `engine tickets` prints a page and the command for the next, walks every
// page with --all, filters by run and refuses a limit out of range.
func TestTicketsCommandPages(t *testing.T) {
	s := serveForTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var want []string
	var runs []string
	for range 5 {
		run, ticket := askStep(t, ctx, s.c)
		runs, want = append(runs, run), append(want, ticket)
	}
	slices.Sort(want)
	url := s.url
	tickets := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(ctx, append([]string{"tickets", "--nats", url}, args...), &out, io.Discard)
		return out.String(), err
	}
	ids := regexp.MustCompile(`(?m)^([0-9A-Z]{26})  `)
	more := regexp.MustCompile(`(?m)^more: engine tickets --cursor (\S+) --nats ` + regexp.QuoteMeta(url) + `$`)

	out, err := tickets("--limit", "2")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for page := 1; ; page++ {
		for _, m := range ids.FindAllStringSubmatch(out, -1) {
			got = append(got, m[1])
		}
		m := more.FindStringSubmatch(out)
		if m == nil {
			break
		}
		if page > 5 {
			t.Fatalf("more than 5 pages of 2 for 5 tickets:\n%s", out)
		}
		if out, err = tickets("--limit", "2", "--cursor", m[1]); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("pages of 2 printed %v, want %v", got, want)
	}

	out, err = tickets("--limit", "2", "--all", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var all commands.TicketPage
	if err := json.Unmarshal([]byte(out), &all); err != nil {
		t.Fatalf("--all --json printed %q: %v", out, err)
	}
	got = got[:0]
	for _, tv := range all.Tickets {
		got = append(got, tv.ID)
	}
	if !slices.Equal(got, want) || all.Next != "" {
		t.Errorf("--all --json: %v next %q, want %v and no next", got, all.Next, want)
	}

	if out, err = tickets("--run", runs[2]); err != nil || !strings.Contains(out, runs[2]) || len(ids.FindAllString(out, -1)) != 1 || more.MatchString(out) {
		t.Errorf("--run %s printed %q, %v; want its one ticket", runs[2], out, err)
	}
	if _, err := tickets("--limit", "1001"); err == nil || !strings.Contains(err.Error(), "--limit 1001") {
		t.Errorf("--limit 1001: %v, want a usage error", err)
	}
	if _, err := tickets("--cursor", "garbage!"); commands.Code(err) != commands.CodeInvalidInput {
		t.Errorf("--cursor garbage: %v, want invalid_input", err)
	}
}
