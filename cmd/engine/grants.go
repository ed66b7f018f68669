package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/stepgate/stepgate/commands"
)

// runGrants is `engine grants [--project P]` and `engine grants revoke ID`.
func runGrants(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("grants", stderr)
	var cf connFlags
	cf.registerClient(fs)
	project := fs.String("project", "", "only this project's grants")
	as := principalFlag(fs, "who revokes (recorded)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	revoke := ""
	switch {
	case fs.NArg() == 0:
	case fs.NArg() == 2 && fs.Arg(0) == "revoke":
		revoke = fs.Arg(1)
	default:
		return usageError{"engine grants: want no argument, or revoke ID"}
	}
	return cf.with(ctx, stderr, func(api engineAPI) error {
		if revoke != "" {
			g, err := api.RevokeGrant(ctx, commands.RevokeRequest{ID: revoke, Principal: *as})
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "revoked %s: %s %q in project %s\n", g.ID, g.Action, g.Resource, g.Project)
			return nil
		}
		gs, err := api.Grants(ctx, commands.GrantsRequest{Project: *project})
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(stdout).Encode(gs)
		}
		for _, g := range gs {
			fmt.Fprintf(stdout, "%s  project %-16s %s %q  by %s (ticket %s)\n", g.ID, g.Project, g.Action, g.Resource, g.Principal, g.Ticket)
		}
		return nil
	})
}
