package commands

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/gate"
	"github.com/stepgate/stepgate/internal/vocab"
)

func checkLocation(loc string) error {
	if loc == "" || !filepath.IsAbs(loc) || filepath.Clean(loc) != loc {
		return fmt.Errorf("location %q: must be a clean absolute path: %w", loc, ErrInvalidRequest)
	}
	fi, err := os.Stat(loc)
	if err != nil {
		return fmt.Errorf("location %q: %w: %w", loc, ErrInvalidRequest, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("location %q: not a directory: %w", loc, ErrInvalidRequest)
	}
	return nil
}

// checkOverride accepts run overrides that can only narrow.
func checkOverride(r gate.Rule) error {
	switch {
	case r.Action == "" || r.Resource == "":
		return fmt.Errorf("run rule %s: action and resource are required: %w", r, ErrInvalidRequest)
	case r.Effect != gate.Deny && r.Effect != gate.Ask:
		return fmt.Errorf("run rule %s: effect %q: a run override may only narrow (deny or ask): %w", r, r.Effect, ErrInvalidRequest)
	case r.TicketTTL != "":
		if d, err := time.ParseDuration(r.TicketTTL); err != nil || d <= 0 || r.Effect != gate.Ask {
			return fmt.Errorf("run rule %s: ticket_ttl %q: want a positive duration on an ask rule: %w", r, r.TicketTTL, ErrInvalidRequest)
		}
	}
	return nil
}

// expandHome expands a leading "~" or "$HOME" of a run rule's resource to
// this host's home directory, as the configuration expands its rules (see
// gate.ExpandHome); a rule that needs a home when the host has none is
// refused, as a deny left unexpanded would never match.
func expandHome(r *gate.Rule) error {
	if _, ok := gate.HomeRef(r.Resource); !ok || !gate.HomeAction(r.Action) {
		return nil
	}
	res, ok := gate.ExpandHome(r.Resource, config.Home())
	if !ok {
		return fmt.Errorf("run rule %s: it names the home directory, and this host has none (HOME is not set or not absolute): %w", r, ErrInvalidRequest)
	}
	r.Resource = res
	return nil
}

// validProject reports whether a project id is a safe subject token.
func validProject(p string) bool {
	if p == "" || len(p) > 64 {
		return false
	}
	for i := range len(p) {
		c := p[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// StartRun answers [Engine.StartRun].
func (h *runs) StartRun(ctx context.Context, req StartRunRequest) (*RunInfo, error) {
	if req.Agent == "" {
		req.Agent = "build"
	}
	if req.Run != "" && !events.ValidID(req.Run) {
		return nil, fmt.Errorf("run id %q: want a ULID: %w", req.Run, ErrInvalidRequest)
	}
	if req.Location == "" || !filepath.IsAbs(req.Location) || filepath.Clean(req.Location) != req.Location {
		return nil, checkLocation(req.Location)
	}
	for _, r := range req.Rules {
		if err := checkOverride(r); err != nil {
			return nil, err
		}
	}
	var there RunInfo
	if handled, err := h.startElsewhere(ctx, req, &there); handled {
		if err != nil {
			return nil, err
		}
		return &there, nil
	}
	if err := checkLocation(req.Location); err != nil {
		return nil, err
	}
	run := req.Run
	if run == "" {
		run = h.cfg.IDs.New(h.cfg.Clock())
	}
	// A location marked by this start takes the run's id for its own.
	place, err := executor.MarkLocation(req.Location, h.cfg.Host, func() string { return run })
	if err != nil {
		return nil, fmt.Errorf("start run: %w", err)
	}
	if req.Project == "" {
		sum := sha256.Sum256([]byte(req.Location))
		req.Project = hex.EncodeToString(sum[:8])
	}
	var ttl time.Duration
	if req.TicketTTL != "" {
		d, err := time.ParseDuration(req.TicketTTL)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("ticket ttl %q: want a positive duration: %w", req.TicketTTL, ErrInvalidRequest)
		}
		ttl = d
	}
	if !validProject(req.Project) {
		return nil, fmt.Errorf("project %q: letters, digits, - and _ only, at most 64: %w", req.Project, ErrInvalidRequest)
	}
	pol := h.cfg.Policy(req.Agent, req.Location)
	if pol.TicketTTL > 0 && (ttl == 0 || ttl > pol.TicketTTL) {
		ttl = pol.TicketTTL // the configuration's deadline; a run may only shorten it
	}
	rules := slices.Clone(pol.Rules)
	limits := h.cfg.Limits
	if pol.Limits.MaxLines > 0 {
		limits.MaxLines = pol.Limits.MaxLines
	}
	if pol.Limits.MaxBytes > 0 {
		limits.MaxBytes = pol.Limits.MaxBytes
	}
	for _, r := range req.Rules {
		r.Source = gate.SourceRun
		if err := expandHome(&r); err != nil {
			return nil, err
		}
		rules = append(rules, r)
	}
	narrowing := gate.Configured
	if req.DisableTools {
		narrowing = gate.DenyAll
	}
	pins := mcpPins(pol.MCPServers)
	if narrowing == gate.Configured {
		h.reg.mcp.forRun(ctx, pol.MCPServers, req.Location)
	}
	cat, adv := h.catalog(rules, narrowing, pins)
	started := events.RunStarted{
		Agent: req.Agent, Location: req.Location, Project: req.Project,
		Rules: vocab.EventRules(rules), Narrowing: narrowing.String(), Limits: limits,
		PolicyDigest: rules.Digest(), EngineVersion: h.cfg.Version, TicketTTLMs: ttl.Milliseconds(),
		MCP: pins, Principal: principalOf(ctx), Place: pinned(place), ConfigVersion: pol.Version,
		Model:   req.Model,
		Sandbox: pinnedSandbox(pol.Sandbox.Tighten(h.cfg.Sandbox)),
	}
	if req.Run != "" {
		return h.startChosen(ctx, req.Run, started, adv, cat)
	}
	c := h.newCommit(run, 0, events.KindStart, started, adv)
	if _, err := h.commit(ctx, &c, runAt{}); err != nil {
		return nil, fmt.Errorf("start run: %w", err)
	}
	return &RunInfo{Run: run, Catalog: cat}, nil
}
