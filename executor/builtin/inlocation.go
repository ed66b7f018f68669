package builtin

import (
	"fmt"

	"github.com/stepgate/stepgate/executor"
)

// resolveInLocation resolves p for a tool that stays inside the location:
// an external path is ErrExternalPath.
func resolveInLocation(location, p string) (executor.Path, error) {
	r, err := executor.Resolve(location, p, false)
	if err != nil {
		return executor.Path{}, err
	}
	if r.External {
		return executor.Path{}, fmt.Errorf("%w: absolute path %q is outside the location", ErrExternalPath, p)
	}
	return r, nil
}
