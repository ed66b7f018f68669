package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"

	sgclient "github.com/stepgate/stepgate/client"
)

// runLocations is `engine locations [--json]`: the fleet as the answering
// host sees it — every host, what it declared (serve --locations) and its
// lease, then the locations of the runs not ended, each with the hosts
// that declare it and whether each holds it (checked on that host).
func runLocations(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("locations", stderr)
	var cf connFlags
	cf.registerClient(fs)
	asJSON := fs.Bool("json", false, "print the answer as JSON")
	limit := fs.Int("limit", 0, fmt.Sprintf("list at most this many locations, those with the most runs first (default and most %d)", sgclient.MaxLocationsLimit))
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usageError{"engine locations: takes no arguments"}
	}
	return cf.with(ctx, stderr, func(api engineAPI) error {
		list, err := api.Locations(ctx, sgclient.LocationsRequest{Limit: *limit})
		if err != nil {
			return err
		}
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(list)
		}
		printLocations(stdout, list)
		return nil
	})
}

// printLocations prints the fleet's hosts and locations as two tables.
func printLocations(w io.Writer, l *sgclient.LocationList) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tLEASE\tDECLARES")
	for _, h := range l.Hosts {
		decl := strings.Join(h.Locations, " ")
		if decl == "" {
			decl = "whatever exists on its filesystem"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", printable(h.Host), h.Lease, printable(decl))
	}
	_ = tw.Flush()
	fmt.Fprintln(w)
	if len(l.Locations) == 0 {
		fmt.Fprintln(w, "no run that has not ended has a location")
		return
	}
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LOCATION\tID\tRUNS\tLAST RAN ON\tHOLDERS")
	for _, loc := range l.Locations {
		var hs []string
		for _, h := range loc.Holders {
			s := printable(h.Host) + " holds it"
			if !h.Holds {
				s = printable(h.Host) + " does not (" + printable(h.Why) + ")"
			}
			hs = append(hs, s)
		}
		if len(hs) == 0 {
			hs = []string{"none: no live host declares it"}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", printable(loc.Path), loc.ID, loc.Runs, printable(loc.LastHost), strings.Join(hs, "; "))
	}
	_ = tw.Flush()
	if l.More {
		fmt.Fprintln(w, "(more locations have runs: --limit)")
	}
}

// printable is s for a terminal: a string with a control character (a
// path or host name may hold an escape sequence) is shown quoted, escapes
// spelled out.
func printable(s string) string {
	for _, r := range s {
		if unicode.IsControl(r) {
			return strconv.QuoteToGraphic(s)
		}
	}
	return s
}
