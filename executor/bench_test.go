package executor_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/builtin"
)

// BenchmarkEchoPrepareRun is the executor's share of one step's hot path.
func BenchmarkEchoPrepareRun(b *testing.B) {
	echo, err := builtin.Echo()
	if err != nil {
		b.Fatal(err)
	}
	args := json.RawMessage(`{"text":"hello, world"}`)
	call := executor.Call{Run: "r", Agent: "a", Step: 1, CallID: "c", Location: "/ws"}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		p, err := echo.Prepare(call, args)
		if err != nil {
			b.Fatal(err)
		}
		if res := p.Run(ctx); res.IsError {
			b.Fatal(res.Text())
		}
	}
}
