package builtin_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/builtin"
)

func TestQuestion(t *testing.T) {
	tool, err := builtin.QuestionTool()
	if err != nil {
		t.Fatal(err)
	}
	if !tool.AwaitsInput() {
		t.Fatal("question must wait for a human")
	}
	args := json.RawMessage(`{"questions":[{"question":"Which branch?","options":["main","dev"]},{"question":"Ship it?"}]}`)
	call := executor.Call{Location: t.TempDir(), Answers: json.RawMessage(`["main","yes"]`)}
	p, err := tool.Prepare(call, args)
	if err != nil {
		t.Fatal(err)
	}
	if r := p.Requests(); len(r) != 0 {
		t.Errorf("question asks permission %+v; it should ask none", r)
	}
	if got := p.Run(context.Background()).Text(); got != "Q: Which branch?\nA: main\nQ: Ship it?\nA: yes" {
		t.Errorf("result %q", got)
	}
	call.Answers = json.RawMessage(`["main"]`)
	p, _ = tool.Prepare(call, args)
	if res := p.Run(context.Background()); !res.IsError {
		t.Errorf("one answer for two questions: %+v", res)
	}
	if _, err := tool.Prepare(call, json.RawMessage(`{"questions":[]}`)); err == nil {
		t.Error("no questions was accepted")
	}
}
