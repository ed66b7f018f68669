package replay

import (
	"bytes"
	"encoding/json"
	"reflect"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection"
)

// DiffKind says how a step of one run differs from the same step of another.
type DiffKind string

// The kinds of difference, from the most fundamental: another call (a
// tool, arguments, or another number of calls), another verdict (or the
// rule that gave it), another result; and a step only one run has.
const (
	DiffCall    DiffKind = "call"
	DiffVerdict DiffKind = "verdict"
	DiffResult  DiffKind = "result"
	DiffOnlyA   DiffKind = "only_a"
	DiffOnlyB   DiffKind = "only_b"
)

// Divergence is the first place two runs differ: a step, the position of
// the call in it (from 1; 0 when the step is only in one run), how, and
// what each run has there.
type Divergence struct {
	Step int      `json:"step"`
	Call int      `json:"call,omitempty"`
	Kind DiffKind `json:"kind"`
	// A and B are each run's side: the call, its verdict or its result,
	// whichever Kind names; empty for the run that has no such step or call.
	A string `json:"a,omitempty"`
	B string `json:"b,omitempty"`
}

// Diff is two runs aligned step by step: the first divergence and a count
// of the rest. Each step that differs is counted once, under the most
// fundamental difference of its first differing call.
type Diff struct {
	A string `json:"a"`
	B string `json:"b"`
	// First is nil when the runs' steps are equal.
	First *Divergence `json:"first,omitempty"`
	// Compared counts the steps both runs have; Equal those of them that
	// are equal.
	Compared int `json:"compared"`
	Equal    int `json:"equal"`
	// Differ counts the steps both have that differ, by kind.
	Differ map[DiffKind]int `json:"differ,omitempty"`
	// OnlyA and OnlyB count the steps past the other run's last.
	OnlyA int `json:"only_a"`
	OnlyB int `json:"only_b"`
}

// Same reports whether the runs' steps are equal.
func (d *Diff) Same() bool { return d.First == nil }

// DiffRuns aligns runs a and b step by step (step n with step n, and within
// a step call i with call i, in model order) and compares each pair: the
// tool and the arguments (as JSON values: key order and spacing do not
// count), the verdict and its rule, and the model-visible result (parts,
// structured content, error flag; the names of spilled files are left out,
// as they name the call). Call ids are left out too: the model names them.
// It only reads a and b.
func DiffRuns(a, b *projection.Run) *Diff {
	d := &Diff{A: a.ID, B: b.ID}
	n := min(len(a.Steps), len(b.Steps))
	for i := range n {
		d.Compared++
		dv := diffStep(&a.Steps[i], &b.Steps[i])
		if dv == nil {
			d.Equal++
			continue
		}
		if d.Differ == nil {
			d.Differ = map[DiffKind]int{}
		}
		d.Differ[dv.Kind]++
		if d.First == nil {
			d.First = dv
		}
	}
	d.OnlyA, d.OnlyB = len(a.Steps)-n, len(b.Steps)-n
	if d.First == nil && d.OnlyA > 0 {
		d.First = &Divergence{Step: n + 1, Kind: DiffOnlyA, A: stepLine(&a.Steps[n])}
	}
	if d.First == nil && d.OnlyB > 0 {
		d.First = &Divergence{Step: n + 1, Kind: DiffOnlyB, B: stepLine(&b.Steps[n])}
	}
	return d
}

// diffStep returns the first difference of two steps with the same number,
// or nil.
func diffStep(a, b *projection.Step) *Divergence {
	for i := range max(len(a.Calls), len(b.Calls)) {
		var ca, cb *projection.Call
		if i < len(a.Calls) {
			ca = &a.Calls[i]
		}
		if i < len(b.Calls) {
			cb = &b.Calls[i]
		}
		if k := diffCall(ca, cb); k != "" {
			return &Divergence{Step: a.N, Call: i + 1, Kind: k, A: side(ca, k), B: side(cb, k)}
		}
	}
	return nil
}

// diffCall returns how two calls at the same place differ, "" if they do
// not; a nil call (the step has fewer calls) differs as another call.
func diffCall(a, b *projection.Call) DiffKind {
	switch {
	case a == nil || b == nil:
		return DiffCall
	case a.Tool != b.Tool || !sameJSON(a.Args, b.Args):
		return DiffCall
	case !sameDecision(a.Decision, b.Decision):
		return DiffVerdict
	case !sameResult(a.Result, b.Result):
		return DiffResult
	}
	return ""
}

func sameDecision(a, b *events.PermissionDecided) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Verdict == b.Verdict && reflect.DeepEqual(a.Rule, b.Rule)
}

func sameResult(a, b *events.ToolResultRecorded) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.IsError != b.IsError || !sameJSON(a.Structured, b.Structured) || len(a.Parts) != len(b.Parts) {
		return false
	}
	for i := range a.Parts {
		pa, pb := a.Parts[i], b.Parts[i]
		if pa.Type != pb.Type || pa.Text != pb.Text || pa.MIME != pb.MIME || !bytes.Equal(pa.Data, pb.Data) {
			return false
		}
	}
	return true
}

// sameJSON reports whether two raw JSON values are the same value; values
// that are not JSON are compared as bytes.
func sameJSON(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}
