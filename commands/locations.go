package commands

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection"
)

// Locations wire types (the wire contract's).
type (
	LocationsRequest = client.LocationsRequest
	LocationList     = client.LocationList
)

// checkPlaceRequest asks a host whether it holds a location (see
// OpCheckPlace).
type checkPlaceRequest struct {
	Location string        `json:"location"`
	Place    *events.Place `json:"place,omitempty"`
}

// checkPlace answers OpCheckPlace: nil when this host holds the location,
// else why not (ErrNotHolder).
func (b *base) checkPlace(_ context.Context, req checkPlaceRequest) (struct{}, error) {
	return struct{}{}, b.fleet.holds(req.Location, req.Place)
}

// Locations answers [Engine.Locations]: the hosts as this host sees them,
// and the locations of the runs not ended (most runs first), each with the
// hosts that declare it and whether each holds it — this host checks its
// own directory, and asks each other live host that declares the location
// to check its own (one request per host and location).
func (e *Engine) Locations(ctx context.Context, req LocationsRequest) (*LocationList, error) {
	limit := req.Limit
	if limit <= 0 || limit > client.MaxLocationsLimit {
		limit = client.MaxLocationsLimit
	}
	out := &LocationList{Host: e.cfg.Host, Hosts: e.fleet.hosts(), Locations: []client.LocationView{}}
	runs, err := e.proj.Runs()
	if err != nil {
		return nil, err
	}
	type key struct{ path, id string }
	type seen struct {
		view  client.LocationView
		place *events.Place
	}
	byKey := map[key]*seen{}
	for _, s := range runs {
		if s.Status == projection.StatusEnded {
			continue
		}
		r, err := e.header(s.ID)
		if err != nil {
			continue
		}
		k := key{r.Snapshot.Location, ""}
		if p := r.Snapshot.Place; p != nil {
			k.id = p.ID
		}
		at := byKey[k]
		if at == nil {
			at = &seen{view: client.LocationView{Path: k.path, ID: k.id}, place: r.Snapshot.Place}
			byKey[k] = at
		}
		at.view.Runs++
		if h := lastHost(&r); h != "" {
			at.view.LastHost = h // runs are listed oldest first: the last one's wins
		}
	}
	all := make([]*seen, 0, len(byKey))
	for _, s := range byKey {
		all = append(all, s)
	}
	slices.SortFunc(all, func(a, b *seen) int {
		return cmp.Or(b.view.Runs-a.view.Runs, cmp.Compare(a.view.Path, b.view.Path), cmp.Compare(a.view.ID, b.view.ID))
	})
	if len(all) > limit {
		all, out.More = all[:limit], true
	}
	for _, s := range all {
		s.view.Holders = e.holdersOf(ctx, s.view.Path, s.place, out.Hosts)
		out.Locations = append(out.Locations, s.view)
	}
	return out, nil
}

// holdersOf says, for each host that declares loc, whether it holds it as
// place p.
func (e *Engine) holdersOf(ctx context.Context, loc string, p *events.Place, hosts []client.FleetHost) []client.HolderState {
	var out []client.HolderState
	for _, h := range hosts {
		if !declares(h.Locations, loc) {
			continue
		}
		st := client.HolderState{Host: h.Host, Lease: h.Lease}
		var err error
		switch {
		case h.Host == e.cfg.Host:
			err = e.fleet.holds(loc, p)
		case h.Lease != "held" && h.Lease != "unknown":
			err = errors.New("its lease is " + h.Lease)
		case e.fleet.fwd == nil:
			err = errors.New("this host forwards nothing: not asked")
		default:
			var done struct{}
			err = e.forwardTo(ctx, h.Host, OpCheckPlace, checkPlaceRequest{Location: loc, Place: p}, &done)
		}
		st.Holds = err == nil
		if err != nil {
			st.Why = oneLine(err.Error())
		}
		out = append(out, st)
	}
	return out
}
