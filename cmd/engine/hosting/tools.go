package hosting

import (
	"fmt"

	"github.com/stepgate/stepgate/config"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/builtin"
	"github.com/stepgate/stepgate/gate"
)

// tools is the process layer a host installs; withTest adds the test
// tools (engine serve --test-tools). websearch is installed only when the
// user configuration file names a search endpoint (websearch.endpoint): the
// catalogue is the host's, so a project file's endpoint does not install it.
func tools(withTest bool, userFile string) (*executor.Registry, error) {
	ts, err := builtin.Tools()
	if err != nil {
		return nil, err
	}
	if userFile != "" {
		f, err := config.Load(userFile, gate.SourceUser)
		if err != nil {
			return nil, err
		}
		if f != nil && f.WebsearchEndpoint != "" {
			ws, err := builtin.Websearch(f.WebsearchEndpoint)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", userFile, err)
			}
			ts = append(ts, ws)
		}
	}
	if withTest {
		more, err := builtin.TestTools()
		if err != nil {
			return nil, err
		}
		ts = append(ts, more...)
	}
	return executor.NewRegistry(ts...)
}
