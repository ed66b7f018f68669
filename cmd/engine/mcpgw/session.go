package mcpgw

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strconv"

	"github.com/oklog/ulid/v2"
	sgclient "github.com/stepgate/stepgate/client"
)

// maxGenerations bounds how many ended runs of one session [Start] walks
// past before it gives up (a run ends only when a human declines it).
const maxGenerations = 1000

// RunID is the run id of generation gen of a session: a ULID made of the
// first 16 bytes of a SHA-256 over the session's name, location, agent and
// project. The same session on any process, on any host, names the same
// run, so a restarted gateway finds its run (and its pending tickets)
// without a file of its own, and a start sent twice starts one run. A
// generation is used up when its run has ended (a human declined it): the
// session goes on with the next.
func RunID(session, location, agent, project string, gen int) string {
	sum := sha256.Sum256([]byte("stepgate mcp session\x00" + session + "\x00" + location + "\x00" + agent + "\x00" + project + "\x00" + strconv.Itoa(gen)))
	var id ulid.ULID
	copy(id[:], sum[:16])
	return id.String()
}

// startSession starts (or finds again) the session's run: the first
// generation whose run has not ended.
func startSession(ctx context.Context, api sgclient.API, cfg *Config) (*sgclient.RunInfo, error) {
	for gen := range maxGenerations {
		req := sgclient.StartRunRequest{Agent: cfg.Agent, Location: cfg.Location, Project: cfg.Project,
			Run: RunID(cfg.Session, cfg.Location, cfg.Agent, cfg.Project, gen)}
		info, err := api.StartRun(ctx, req)
		if errors.Is(err, sgclient.ErrRunNotActive) {
			continue // declined by a human: the session's next run
		}
		if err != nil {
			return nil, fmt.Errorf("start the run of MCP session %q: %w", cfg.Session, err)
		}
		return info, nil
	}
	return nil, fmt.Errorf("MCP session %q: its first %d runs have ended: choose another --session", cfg.Session, maxGenerations)
}
