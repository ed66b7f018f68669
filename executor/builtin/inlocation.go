package builtin

import (
	"fmt"

	"github.com/stepgate/stepgate/executor"
)

// resolveInLocation resolves p for a call of a tool that stays inside the
// location (through Call.Resolve): an external path is ErrExternalPath.
func resolveInLocation(c executor.Call, p string) (executor.Path, error) {
	r, err := c.Resolve(p, false)
	if err != nil {
		return executor.Path{}, err
	}
	if r.External {
		return executor.Path{}, fmt.Errorf("%w: absolute path %q is outside the location", ErrExternalPath, p)
	}
	return r, nil
}
