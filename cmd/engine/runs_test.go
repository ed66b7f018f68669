package main

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/commands"
)

// `engine runs` lists runs a page at a time, through the service: the
// runs endpoint answers pages (limit, cursor), the client's Runs walks
// them all, and the verb prints the page and, when more follow, the
// command that goes on. A listing that fits one page prints as it always
// did; a limit past the most, or a cursor the engine did not give, is
// invalid_input.
func TestRunsVerbPages(t *testing.T) {
	s := serveForTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var ids []string
	for range 5 {
		info, err := s.c.StartRun(ctx, commands.StartRunRequest{Location: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, info.Run)
	}
	slices.Sort(ids)

	var walked []string
	pages := 0
	for req := (sgclient.RunsRequest{Limit: 2}); ; pages++ {
		page, err := s.c.RunsPage(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Runs {
			walked = append(walked, r.ID)
		}
		if page.Next == "" {
			break
		}
		req.Cursor = page.Next
	}
	if !slices.Equal(walked, ids) || pages != 2 {
		t.Errorf("pages of 2 walked %v in %d pages after the first, want %v in 2", walked, pages, ids)
	}
	all, err := s.c.Runs(ctx)
	if err != nil || len(all) != len(ids) {
		t.Errorf("Runs: %d runs, %v; want %d", len(all), err, len(ids))
	}
	for _, req := range []sgclient.RunsRequest{{Limit: sgclient.MaxRunsLimit + 1}, {Limit: -1}, {Cursor: "bm90IGEgY3Vyc29y"}, {Cursor: "!"}} {
		if _, err := s.c.RunsPage(ctx, req); commands.Code(err) != commands.CodeInvalidInput {
			t.Errorf("runs %+v: %v, want invalid_input", req, err)
		}
	}

	whole, err := engineVerb(t, "runs", "--nats", s.url)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(whole, "\n"), "\n")
	if len(lines) != 5 || strings.Contains(whole, "more runs") {
		t.Errorf("engine runs with 5 runs printed:\n%s\nwant the 5 runs and nothing more", whole)
	}
	for i, l := range lines {
		if !strings.HasPrefix(l, ids[i]+"  build ") {
			t.Errorf("line %d %q, want run %s first", i+1, l, ids[i])
		}
	}
	first, err := engineVerb(t, "runs", "--nats", s.url, "--limit", "3")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\(more runs follow: engine runs --cursor (\S+) --nats ` + regexp.QuoteMeta(s.url) + `\)$`).FindStringSubmatch(first)
	if m == nil || !strings.HasPrefix(first, strings.Join(lines[:3], "\n")+"\n") {
		t.Fatalf("engine runs --limit 3 printed:\n%s\nwant the first 3 runs and the command that goes on", first)
	}
	rest, err := engineVerb(t, "runs", "--nats", s.url, "--limit", "3", "--cursor", m[1], "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got []sgclient.RunSummary
	if err := json.Unmarshal([]byte(rest), &got); err != nil || len(got) != 2 || got[0].ID != ids[3] || got[1].ID != ids[4] {
		t.Errorf("engine runs --cursor --json printed %q (%v), want the last 2 runs", rest, err)
	}
	if _, err := engineVerb(t, "runs", "--nats", s.url, "--limit", "5000"); exitCode(err) != 1 {
		t.Errorf("engine runs --limit 5000: %v, want exit status 1", err)
	}
}
