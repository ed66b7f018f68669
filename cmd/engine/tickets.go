package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/stepgate/stepgate/cmd/engine/render"
	"github.com/stepgate/stepgate/commands"
	"github.com/stepgate/stepgate/events"
)

// runTickets is `engine tickets`: a page of the pending confirmations,
// oldest first, and the command that shows the next page.
func runTickets(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("tickets", stderr)
	var cf connFlags
	cf.registerClient(fs)
	var req commands.TicketsRequest
	fs.StringVar(&req.Run, "run", "", "only this run's tickets")
	fs.StringVar(&req.Project, "project", "", "only this project's tickets")
	fs.StringVar(&req.Tool, "tool", "", "only the tickets of this tool")
	fs.StringVar(&req.OlderThan, "older-than", "", "only tickets issued longer ago than this duration (e.g. 1h)")
	fs.IntVar(&req.Limit, "limit", commands.DefaultTicketsLimit, fmt.Sprintf("tickets per page (at most %d)", commands.MaxTicketsLimit))
	fs.StringVar(&req.Cursor, "cursor", "", "the page after the one that printed this cursor")
	all := fs.Bool("all", false, "every page")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usageError{"engine tickets: takes no arguments"}
	}
	if req.Limit < 1 || req.Limit > commands.MaxTicketsLimit {
		return usageError{fmt.Sprintf("engine tickets: --limit %d: want 1 to %d", req.Limit, commands.MaxTicketsLimit)}
	}
	return cf.with(ctx, stderr, func(api engineAPI) error {
		out := &commands.TicketPage{Tickets: []commands.TicketView{}}
		for {
			page, err := api.Tickets(ctx, req)
			if err != nil {
				return err
			}
			if !*asJSON {
				printTickets(stdout, page.Tickets)
			} else {
				out.Tickets = append(out.Tickets, page.Tickets...)
			}
			out.Next = page.Next
			if !*all || page.Next == "" {
				break
			}
			// The cursor carries the query: send it alone.
			req = commands.TicketsRequest{Limit: req.Limit, Cursor: page.Next}
		}
		if *asJSON {
			return json.NewEncoder(stdout).Encode(out)
		}
		if out.Next != "" {
			fmt.Fprintf(stdout, "more: engine tickets --cursor %s%s\n", out.Next, cf.hint())
		}
		return nil
	})
}

// printTickets prints tickets one per line, with their reason and requests.
func printTickets(stdout io.Writer, ts []commands.TicketView) {
	for _, t := range ts {
		deadline := ""
		if t.Deadline != nil {
			deadline = "  until " + t.Deadline.Format("2006-01-02 15:04:05Z07:00")
		}
		fmt.Fprintf(stdout, "%s  %-10s %-8s run %s step %d  %s%s\n", t.ID, t.Kind, t.Tool, t.Run, t.Step, render.OneLine(string(t.Args), 60), deadline)
		if t.Reason != "" {
			fmt.Fprintf(stdout, "    %s\n", t.Reason)
		}
		for _, r := range t.Requests {
			always := ""
			if r.Ask && len(r.Save) == 0 {
				always = "  (always asks; \"always\" saves nothing)"
			}
			fmt.Fprintf(stdout, "    %s %v%s\n", r.Action, r.Resources, always)
		}
	}
}

// runApprove is `engine approve TICKET [--always] [--args JSON] [--as WHO]`.
func runApprove(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("approve", stderr)
	var cf connFlags
	cf.registerClient(fs)
	always := fs.Bool("always", false, "also save the approval for the project (printed: action, pattern, project)")
	pattern := fs.String("pattern", "", "with --always: save this pattern instead of the ticket's, narrower than or equal to it and matching the call (checked by the engine)")
	as := principalFlag(fs, "who approves (recorded)")
	answers := fs.String("answers", "", "the answers to an input ticket (JSON)")
	edited := fs.String("args", "", "approve the call with these arguments instead of the model's (JSON; decided again by the gate)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{"engine approve: want exactly one ticket id"}
	}
	req := commands.ReplyRequest{Ticket: fs.Arg(0), Reply: events.ReplyOnce, Principal: *as}
	if *always {
		req.Reply = events.ReplyAlways
	}
	if *pattern != "" {
		if !*always {
			return usageError{"engine approve: --pattern goes with --always"}
		}
		req.Pattern = *pattern
	}
	if *answers != "" {
		if !json.Valid([]byte(*answers)) {
			return usageError{"engine approve: --answers is not JSON"}
		}
		req.Reply, req.Answers = events.ReplyAnswer, json.RawMessage(*answers)
	}
	if *edited != "" {
		if *answers != "" {
			return usageError{"engine approve: --args and --answers do not go together"}
		}
		if !json.Valid([]byte(*edited)) {
			return usageError{"engine approve: --args is not JSON"}
		}
		req.Args = json.RawMessage(*edited)
	}
	return reply(ctx, &cf, req, stdout, stderr)
}

// runReject is `engine reject TICKET [-m MSG] [--as WHO]`.
func runReject(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("reject", stderr)
	var cf connFlags
	cf.registerClient(fs)
	msg := fs.String("m", "", "feedback for the model; without it the run ends declined")
	as := principalFlag(fs, "who rejects (recorded)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{"engine reject: want exactly one ticket id"}
	}
	return reply(ctx, &cf, commands.ReplyRequest{Ticket: fs.Arg(0), Reply: events.ReplyReject, Message: *msg, Principal: *as}, stdout, stderr)
}

func reply(ctx context.Context, cf *connFlags, req commands.ReplyRequest, stdout, stderr io.Writer) error {
	return cf.with(ctx, stderr, func(api engineAPI) error {
		res, err := api.Reply(ctx, req)
		if err != nil {
			return err
		}
		printReply(stdout, req, res, cf.hint())
		return nil
	})
}

// printReply says what a reply did, and the step's results once final.
// conn is the connection flags the commands it suggests carry.
func printReply(stdout io.Writer, req commands.ReplyRequest, res *commands.ReplyResult, conn string) {
	verb := "rejected"
	if res.Approved {
		verb = "approved"
		if len(req.Args) > 0 {
			verb = "approved with edited arguments"
		}
	} else if req.Reply != events.ReplyReject {
		verb = "blocked on re-check"
	}
	fmt.Fprintf(stdout, "ticket %s %s (run %s, step %d)\n", res.Ticket, verb, res.Run, res.Step)
	for _, g := range res.Saved {
		fmt.Fprintf(stdout, "saved grant %s: %s %q for project %s\n", g.ID, g.Action, g.Resource, g.Project)
	}
	if req.Reply == events.ReplyAlways && res.Approved && len(res.Saved) == 0 {
		fmt.Fprintln(stdout, "no new grant saved (the project had it, the call always asks, or a copy of this reply sent before a reconnect saved it): see engine grants")
	}
	if res.Outcome != nil {
		p := render.NewPrinter(stdout, false)
		p.Conn = conn
		p.Step(res.Outcome)
	}
}

// principalFlag registers --as: who answers, recorded; its default is
// resolved when the verb runs ($USER, else "operator"), so the help is the
// same on every machine.
func principalFlag(fs *flag.FlagSet, usage string) *string {
	as := new(string)
	fs.Func("as", usage+" (default $USER, else operator)", func(v string) error {
		*as = v
		return nil
	})
	*as = defaultPrincipal()
	return as
}

func defaultPrincipal() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "operator"
}
