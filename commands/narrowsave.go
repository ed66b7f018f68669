package commands

import (
	"fmt"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/gate"
)

// narrowSave is what an "always" with an operator's narrowed pattern saves:
// the requests it approves (asked), each that saves a pattern saving
// pattern instead. It is refused (invalid_input, nothing changes) unless
// the requests save exactly one pattern, pattern is narrower than or equal
// to it (gate.Narrows), and every resource of the requests that saved it
// is still allowed by pattern, in the forms a saved approval matches. The
// page or the CLI that sent it is not trusted with any of this.
func narrowSave(ticket string, asked []events.Request, pattern string) ([]events.Request, error) {
	saves := map[[2]string]bool{} // (action, pattern): what "always" would save
	var save string
	for _, r := range asked {
		for _, s := range r.Save {
			saves[[2]string{r.Action, s}], save = true, s
		}
	}
	switch n := len(saves); {
	case n == 0:
		return nil, fmt.Errorf("ticket %s saves no pattern (it always asks): a narrowed pattern has nothing to narrow: %w", ticket, ErrInvalidRequest)
	case n > 1:
		return nil, fmt.Errorf("ticket %s saves %d patterns; a narrowed pattern stands for one: approve it always without one: %w", ticket, n, ErrInvalidRequest)
	}
	if !gate.Narrows(pattern, save) {
		return nil, fmt.Errorf("pattern %q is not narrower than the ticket's save pattern %q "+
			"(give the save pattern itself, a resource it matches, or such a prefix followed by '*'): %w", pattern, save, ErrInvalidRequest)
	}
	allow := gate.Ruleset{{Resource: pattern, Effect: gate.Allow, Source: gate.SourceSaved}}
	out := make([]events.Request, len(asked))
	for i, r := range asked {
		out[i] = r
		if len(r.Save) == 0 {
			continue
		}
		allow[0].Action = r.Action
		for _, res := range r.Resources {
			one := descriptor.Request{Action: r.Action, Resources: []string{res}, Root: r.Root}
			if gate.EvaluateInput(one, nil, allow).Effect != gate.Allow {
				return nil, fmt.Errorf("pattern %q does not match %s, which ticket %s asks for: %w", pattern, res, ticket, ErrInvalidRequest)
			}
		}
		out[i].Save = []string{pattern}
	}
	return out, nil
}
