package executor_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stepgate/stepgate/executor"
	"github.com/stepgate/stepgate/executor/builtin"
)

// FuzzPrepare feeds arbitrary argument bytes to echo: Prepare never panics, refuses
// with an *InputError whose text is the model-visible one, and a call it accepts
// echoes exactly the text it decoded.
func FuzzPrepare(f *testing.F) {
	for _, s := range []string{`{"text":"hi"}`, `null`, ``, `{}`, `{"text":1}`, `{"text":"a","x":1}`, `[`, `{"text":"\u00e9"}`} {
		f.Add([]byte(s))
	}
	echo, err := builtin.Echo()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		p, err := echo.Prepare(executor.Call{}, json.RawMessage(args))
		if err != nil {
			var ie *executor.InputError
			if !errors.As(err, &ie) || !strings.HasPrefix(err.Error(), executor.InvalidInputPrefix) || strings.Contains(ie.Detail, "\n") {
				t.Fatalf("Prepare(%q) = %#v", args, err)
			}
			return
		}
		var in struct{ Text string }
		if err := json.Unmarshal(args, &in); err != nil {
			t.Fatalf("Prepare accepted %q, which encoding/json refuses: %v", args, err)
		}
		res := p.Run(context.Background())
		want := in.Text
		if want == "" {
			want = executor.EmptyOutput
		}
		if res.IsError || res.Text() != want {
			t.Fatalf("Run after Prepare(%q) = %+v, want %q", args, res, want)
		}
		if reqs := p.Requests(); len(reqs) != 1 || reqs[0].Resources[0] != in.Text {
			t.Fatalf("requests %+v", reqs)
		}
	})
}
