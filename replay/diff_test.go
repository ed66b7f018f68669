package replay

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/projection"
	"pgregory.net/rapid"
)

// call is a terminal call: tool, args, verdict with its rule, result text.
func call(id, tool, args, verdict, rule, text string) projection.Call {
	return projection.Call{ID: id, Tool: tool, Args: json.RawMessage(args),
		Decision: &events.PermissionDecided{CallID: id, Verdict: verdict, Rule: &events.Rule{Action: tool, Resource: rule, Effect: verdict}},
		Result:   &events.ToolResultRecorded{CallID: id, Parts: []events.Part{{Type: "text", Text: text}}}}
}

func runOf(id string, steps ...[]projection.Call) *projection.Run {
	r := &projection.Run{ID: id}
	for i, cs := range steps {
		r.Steps = append(r.Steps, projection.Step{N: i + 1, Calls: cs, Final: true})
	}
	return r
}

func TestDiffRuns(t *testing.T) {
	base := func() *projection.Run {
		return runOf("A",
			[]projection.Call{call("c1", "echo", `{"text":"a","n":1}`, "allow", "*", "a")},
			[]projection.Call{call("c2", "bash", `{"command":"ls"}`, "allow", "*", "f.txt"), call("c3", "echo", `{}`, "allow", "*", "")},
			[]projection.Call{call("c4", "echo", `{"text":"z"}`, "allow", "*", "z")})
	}
	tests := []struct {
		name         string
		edit         func(b *projection.Run)
		first        *Divergence
		equal        int
		differ       map[DiffKind]int
		onlyA, onlyB int
	}{
		{"the same run", func(*projection.Run) {}, nil, 3, nil, 0, 0},
		{"arguments in another key order and spacing, other call ids, other spilled file names", func(b *projection.Run) {
			b.Steps[0].Calls[0].Args = json.RawMessage(`{ "n": 1, "text": "a" }`)
			b.Steps[1].Calls[0].ID = "other"
			b.Steps[1].Calls[0].Result.Files = []string{"tool_other"}
		}, nil, 3, nil, 0, 0},
		{"another tool at step 2", func(b *projection.Run) { b.Steps[1].Calls[0].Tool = "grep" },
			&Divergence{Step: 2, Call: 1, Kind: DiffCall, A: `bash {"command":"ls"}`, B: `grep {"command":"ls"}`}, 2, map[DiffKind]int{DiffCall: 1}, 0, 0},
		{"other arguments at the second call, and a result after it", func(b *projection.Run) {
			b.Steps[1].Calls[1].Args = json.RawMessage(`{"text":"x"}`)
			b.Steps[2].Calls[0].Result.Parts[0].Text = "y"
		}, &Divergence{Step: 2, Call: 2, Kind: DiffCall, A: `echo {}`, B: `echo {"text":"x"}`}, 1, map[DiffKind]int{DiffCall: 1, DiffResult: 1}, 0, 0},
		{"a call fewer", func(b *projection.Run) { b.Steps[1].Calls = b.Steps[1].Calls[:1] },
			&Divergence{Step: 2, Call: 2, Kind: DiffCall, A: `echo {}`}, 2, map[DiffKind]int{DiffCall: 1}, 0, 0},
		{"another verdict", func(b *projection.Run) { b.Steps[0].Calls[0].Decision.Verdict = "block" },
			&Divergence{Step: 1, Call: 1, Kind: DiffVerdict, A: "allow (echo * allow)", B: "block (echo * allow)"}, 2, map[DiffKind]int{DiffVerdict: 1}, 0, 0},
		{"the same verdict from another rule", func(b *projection.Run) { b.Steps[0].Calls[0].Decision.Rule.Source = "saved" },
			&Divergence{Step: 1, Call: 1, Kind: DiffVerdict, A: "allow (echo * allow)", B: "allow (echo * allow, saved)"}, 2, map[DiffKind]int{DiffVerdict: 1}, 0, 0},
		{"another result", func(b *projection.Run) { b.Steps[2].Calls[0].Result.IsError = true },
			&Divergence{Step: 3, Call: 1, Kind: DiffResult, A: "z", B: "error: z"}, 2, map[DiffKind]int{DiffResult: 1}, 0, 0},
		{"no result yet", func(b *projection.Run) { b.Steps[2].Calls[0].Result = nil },
			&Divergence{Step: 3, Call: 1, Kind: DiffResult, A: "z", B: "no result"}, 2, map[DiffKind]int{DiffResult: 1}, 0, 0},
		{"a step more", func(b *projection.Run) {
			b.Steps = append(b.Steps, projection.Step{N: 4, Calls: []projection.Call{call("c5", "echo", `{"text":"more"}`, "allow", "*", "")}})
		}, &Divergence{Step: 4, Kind: DiffOnlyB, B: `echo {"text":"more"}`}, 3, nil, 0, 1},
		{"a step fewer", func(b *projection.Run) { b.Steps = b.Steps[:2] },
			&Divergence{Step: 3, Kind: DiffOnlyA, A: `echo {"text":"z"}`}, 2, nil, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := base(), base()
			b.ID = "B"
			tt.edit(b)
			d := DiffRuns(a, b)
			got, _ := json.Marshal(d)
			want, _ := json.Marshal(&Diff{A: "A", B: "B", First: tt.first, Compared: min(3, len(b.Steps)), Equal: tt.equal, Differ: tt.differ,
				OnlyA: tt.onlyA, OnlyB: tt.onlyB})
			if string(got) != string(want) {
				t.Errorf("got  %s\nwant %s", got, want)
			}
			if d.Same() != (tt.first == nil) {
				t.Errorf("Same() = %v with first %+v", d.Same(), d.First)
			}
		})
	}
}

// Properties: a run diffed with itself has no divergence; swapping the
// runs swaps the sides and nothing else; the counts add up.
func TestDiffProperties(t *testing.T) {
	genCall := func(t *rapid.T, label string) projection.Call {
		tool := rapid.SampledFrom([]string{"echo", "bash"}).Draw(t, label+"tool")
		return call(label, tool, fmt.Sprintf(`{"x":%d}`, rapid.IntRange(0, 2).Draw(t, label+"arg")),
			rapid.SampledFrom([]string{"allow", "block"}).Draw(t, label+"verdict"), "*", rapid.SampledFrom([]string{"", "a"}).Draw(t, label+"text"))
	}
	genRun := func(t *rapid.T, id string) *projection.Run {
		r := &projection.Run{ID: id}
		for n := range rapid.IntRange(0, 4).Draw(t, id+"steps") {
			s := projection.Step{N: n + 1}
			for i := range rapid.IntRange(1, 2).Draw(t, id+"calls") {
				s.Calls = append(s.Calls, genCall(t, fmt.Sprintf("%s%d.%d", id, n, i)))
			}
			r.Steps = append(r.Steps, s)
		}
		return r
	}
	swapped := map[DiffKind]DiffKind{DiffOnlyA: DiffOnlyB, DiffOnlyB: DiffOnlyA}
	rapid.Check(t, func(t *rapid.T) {
		a, b := genRun(t, "A"), genRun(t, "B")
		if d := DiffRuns(a, a); !d.Same() || d.Equal != len(a.Steps) {
			t.Fatalf("a run diffed with itself: %+v", d)
		}
		ab, ba := DiffRuns(a, b), DiffRuns(b, a)
		if ab.Same() != ba.Same() || ab.OnlyA != ba.OnlyB || ab.OnlyB != ba.OnlyA || ab.Equal != ba.Equal {
			t.Fatalf("not symmetric: %+v and %+v", ab, ba)
		}
		if f, g := ab.First, ba.First; f != nil {
			k := g.Kind
			if s, ok := swapped[k]; ok {
				k = s
			}
			if f.Step != g.Step || f.Call != g.Call || f.Kind != k || f.A != g.B || f.B != g.A {
				t.Fatalf("first divergence %+v swapped is %+v", f, g)
			}
		}
		n := ab.Equal
		for _, c := range ab.Differ {
			n += c
		}
		if n != ab.Compared || ab.Compared != min(len(a.Steps), len(b.Steps)) {
			t.Fatalf("counts do not add up: %+v", ab)
		}
	})
}
