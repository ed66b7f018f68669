package commands

import (
	"context"
	"slices"

	"github.com/stepgate/stepgate/descriptor"
	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/projection"
)

// Calls of one step that touch the same file run in model order, each
// against the file as the previous one left it; calls that share no path
// run concurrently. Two calls share a path when a real path one of them
// resolved (executor.Prepared.Paths, what the verdict recorded) is one the
// other resolved: two edits of main.go, a write then a read of it, a bash
// redirection into it. A chain is what such sharing links together.

// sharesPath reports whether calls a and b resolved a real path in common.
func sharesPath(a, b *planned) bool {
	if a.prepared == nil || b.prepared == nil {
		return false
	}
	for _, pa := range a.prepared.Paths() {
		for _, pb := range b.prepared.Paths() {
			if pa.Real == pb.Real {
				return true
			}
		}
	}
	return false
}

// anyShared reports whether two of calls share a path (the usual step:
// no, and nothing is allocated to find out).
func anyShared(calls []*planned) bool {
	for i := range calls {
		for j := range i {
			if sharesPath(calls[i], calls[j]) {
				return true
			}
		}
	}
	return false
}

// chains splits calls into chains, each in model order: calls linked by a
// shared path, directly or through other calls, are in one chain.
func chains(calls []*planned) [][]*planned {
	first := make([]int, len(calls)) // the index of the first call of i's chain
	for i := range calls {
		first[i] = i
		for j := range i {
			if first[j] == first[i] || !sharesPath(calls[i], calls[j]) {
				continue
			}
			lo, hi := min(first[i], first[j]), max(first[i], first[j])
			for k := 0; k <= i; k++ {
				if first[k] == hi {
					first[k] = lo
				}
			}
		}
	}
	var out [][]*planned
	at := make(map[int]int, len(calls)) // first index → chain in out
	for i, c := range calls {
		n, ok := at[first[i]]
		if !ok {
			n = len(out)
			at[first[i]] = n
			out = append(out, nil)
		}
		out[n] = append(out[n], c)
	}
	return out
}

// runChain runs a chain's calls one after the other, in model order. A call
// that follows a successful call with an effect on one of its paths runs
// against what that call left (executor.Prepared.Follow): the digest it
// observed when it was decided describes the file before its own step
// changed it, and is no longer what it is held to.
func (h *submitter) runChain(ctx context.Context, epoch uint64, chain []*planned, lim executor.Limits) {
	var changed []*planned
	for _, c := range chain {
		for _, d := range changed {
			if sharesPath(c, d) {
				c.prepared.Follow()
				break
			}
		}
		h.runIn(ctx, epoch, c, lim)
		if !c.result.IsError && c.tool != nil && c.tool.Descriptor().Effect != descriptor.ReadOnly {
			changed = append(changed, c)
		}
	}
}

// inModelOrder sorts calls of step s, to run, by their place in the step
// (an approval that approves others with it lists its own call first).
func inModelOrder(calls []*planned, s *projection.Step) {
	place := func(p *planned) int {
		return slices.IndexFunc(s.Calls, func(c projection.Call) bool { return c.ID == p.req.ID })
	}
	slices.SortStableFunc(calls, func(a, b *planned) int { return place(a) - place(b) })
}
