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
	for _, pa := range pathsOf(a) {
		for _, pb := range pathsOf(b) {
			if pa.Real == pb.Real {
				return true
			}
		}
	}
	return false
}

// pathsOf is the real paths call c resolved when it was decided.
func pathsOf(c *planned) []executor.ResolvedPath {
	if c.prepared == nil {
		return nil
	}
	return c.prepared.Paths()
}

// pairwiseUpTo is how many calls with paths are compared pairwise; past it
// a map of their real paths finds the sharing (a step may hold thousands of
// calls).
const pairwiseUpTo = 16

// chains splits calls into chains, each in model order: calls linked by a
// shared path, directly or through other calls, are in one chain. It
// returns nil when no two calls share a path (the usual step; nothing is
// allocated to find out when there are few calls with paths).
func chains(calls []*planned) [][]*planned {
	withPaths := 0
	for _, c := range calls {
		if len(pathsOf(c)) > 0 {
			withPaths++
		}
	}
	if withPaths < 2 || withPaths <= pairwiseUpTo && !anySharedPairwise(calls) {
		return nil
	}
	parent := make([]int, len(calls)) // a union-find over call indexes
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	owner := make(map[string]int) // real path → the first call that resolved it
	shared := false
	for i, c := range calls {
		for _, p := range pathsOf(c) {
			j, ok := owner[p.Real]
			if !ok {
				owner[p.Real] = i
				continue
			}
			if a, b := find(i), find(j); a != b {
				parent[max(a, b)] = min(a, b) // the root is a chain's first call
				shared = true
			}
		}
	}
	if !shared {
		return nil
	}
	var out [][]*planned
	at := make(map[int]int) // a chain's first call → its place in out
	for i, c := range calls {
		r := find(i)
		n, ok := at[r]
		if !ok {
			n = len(out)
			at[r] = n
			out = append(out, nil)
		}
		out[n] = append(out[n], c)
	}
	return out
}

// anySharedPairwise reports whether two of calls share a path, comparing
// them pairwise.
func anySharedPairwise(calls []*planned) bool {
	for i := range calls {
		if len(pathsOf(calls[i])) == 0 {
			continue
		}
		for j := range i {
			if sharesPath(calls[i], calls[j]) {
				return true
			}
		}
	}
	return false
}

// runChain runs a chain's calls one after the other, in model order. A call
// that follows a successful call with an effect on one of its paths runs
// against what that call left (executor.Prepared.Follow): the digest it
// observed when it was decided describes the file before its own step
// changed it, and is no longer what it is held to.
func (h *submitter) runChain(ctx context.Context, epoch uint64, at placeAt, chain []*planned, lim executor.Limits) {
	var changed []*planned
	for _, c := range chain {
		for _, d := range changed {
			if sharesPath(c, d) {
				c.prepared.Follow()
				break
			}
		}
		h.runIn(ctx, epoch, at, c, lim)
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
