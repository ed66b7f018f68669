package executor_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/builtin"
)

// BenchmarkEchoPrepareRun is the executor's share of one step's hot path,
// with the workloads' argument: 200 printable bytes.
func BenchmarkEchoPrepareRun(b *testing.B) {
	echo, err := builtin.Echo()
	if err != nil {
		b.Fatal(err)
	}
	text := make([]byte, 200)
	for i := range text {
		text[i] = byte(' ' + (i*7)%95)
	}
	args, _ := json.Marshal(map[string]string{"text": string(text)})
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
