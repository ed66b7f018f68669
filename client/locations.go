package client

import "context"

// LocationsRequest asks which hosts hold the locations of the runs not
// ended (engine locations).
type LocationsRequest struct {
	// Limit bounds the locations listed (default and most
	// MaxLocationsLimit).
	Limit int `json:"limit,omitempty"`
}

// MaxLocationsLimit is the most locations one answer lists.
const MaxLocationsLimit = 500

// LocationList is the fleet as the answering host sees it: every host that
// announced what it holds, and the locations of the runs not ended with
// who holds each.
type LocationList struct {
	// Host is the answering host.
	Host      string         `json:"host"`
	Hosts     []FleetHost    `json:"hosts"`
	Locations []LocationView `json:"locations"`
	// More is set when more locations than Limit have runs not ended.
	More bool `json:"more,omitempty"`
}

// FleetHost is one host and what it declared (serve --locations).
type FleetHost struct {
	Host string `json:"host"`
	// Lease is its lease record's state as the answering host last saw it
	// (held, taken, settled, released), "unknown" (no lease seen), or
	// "self" for the answering host.
	Lease string `json:"lease"`
	// Locations are its declared globs; none: whatever exists on its own
	// filesystem.
	Locations []string `json:"locations,omitempty"`
}

// LocationView is one location: its path, its identity, the runs not
// ended there, and the hosts that declare it with whether each holds it.
type LocationView struct {
	Path string `json:"path"`
	// ID is the id in its marker (empty for runs started before placement).
	ID string `json:"id,omitempty"`
	// Runs counts the runs not ended there.
	Runs int `json:"runs"`
	// LastHost is the host that committed the last step of its most
	// recent run.
	LastHost string        `json:"last_host,omitempty"`
	Holders  []HolderState `json:"holders"`
}

// HolderState is whether one host that declares a location holds it.
type HolderState struct {
	Host string `json:"host"`
	// Holds is true when the host checked its directory at the path and
	// found the location itself; Why says why not otherwise (another
	// directory, none, the host not answering).
	Holds bool   `json:"holds"`
	Why   string `json:"why,omitempty"`
	Lease string `json:"lease"`
}

// Locations asks the answering host which hosts hold which locations.
func (c *Client) Locations(ctx context.Context, req LocationsRequest) (*LocationList, error) {
	return callAs[LocationList](ctx, c, EndpointLocations, req)
}
