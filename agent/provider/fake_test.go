package provider_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stepgate/stepgate/agent/fakeprovider"
	"github.com/stepgate/stepgate/agent/model"
)

// drive is a minimal loop: it sends the conversation, answers every call
// with "ran <name>", and stops at a turn without calls.
func drive(t *testing.T, p model.Provider, task string, stream bool) model.Conversation {
	t.Helper()
	conv := model.Conversation{Task: task}
	for range 10 {
		turn, err := p.Next(context.Background(), model.Request{Model: "m", Conversation: conv, Stream: stream,
			Tools: []model.Tool{{Name: "write"}, {Name: "bash"}}})
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		ex := model.Exchange{Turn: turn}
		for _, c := range turn.Calls {
			ex.Results = append(ex.Results, model.Result{CallID: c.ID, Name: c.Name, Content: "ran " + c.Name})
		}
		conv.Exchanges = append(conv.Exchanges, ex)
		if len(turn.Calls) == 0 {
			return conv
		}
	}
	t.Fatal("the script did not end in 10 turns")
	return conv
}

func names(c model.Conversation) [][]string {
	var out [][]string
	for _, ex := range c.Exchanges {
		var n []string
		for _, call := range ex.Turn.Calls {
			n = append(n, call.Name)
		}
		out = append(out, n)
	}
	return out
}

func TestWriteThenBashEachTurnSentOnce(t *testing.T) {
	for _, api := range providers {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", api, stream), func(t *testing.T) {
				srv, url := serve(t, fakeprovider.WriteThenBash("out.txt", "hello", "cat out.txt"))
				conv := drive(t, dial(t, api, url, testKey), "write and run", stream)
				if diff := cmp.Diff([][]string{{"write"}, {"bash"}, nil}, names(conv)); diff != "" {
					t.Errorf("calls per turn (-want +got):\n%s", diff)
				}
				args := string(conv.Exchanges[0].Turn.Calls[0].Args) + string(conv.Exchanges[1].Turn.Calls[0].Args)
				if args != `{"content":"hello","path":"out.txt"}{"command":"cat out.txt"}` {
					t.Errorf("arguments = %s", args)
				}
				final := conv.Exchanges[2].Turn.Text
				if !strings.Contains(final, "write (ok): ran write.") || !strings.Contains(final, "bash (ok): ran bash.") {
					t.Errorf("final text %q does not name both results", final)
				}
				total, per := srv.Count()
				if total != 3 || len(per) != 3 {
					t.Errorf("requests %d over %d conversations, want 3 over 3", total, len(per))
				}
				for k, n := range per {
					if n != 1 {
						t.Errorf("conversation %s sent %d times, want once", k, n)
					}
				}
				// Sending a recorded turn again is what the count exposes.
				_, _ = dial(t, api, url, testKey).Next(context.Background(), model.Request{Model: "m", Conversation: model.Conversation{Task: "write and run"}})
				if _, per := srv.Count(); per[srv.Requests()[0].Key] != 2 {
					t.Errorf("a repeated first request counted %d, want 2", per[srv.Requests()[0].Key])
				}
			})
		}
	}
}

func TestWriteAndBashParallel(t *testing.T) {
	for _, api := range providers {
		t.Run(api, func(t *testing.T) {
			_, url := serve(t, fakeprovider.WriteAndBash("out.txt", "hello", "cat out.txt"))
			conv := drive(t, dial(t, api, url, testKey), "both at once", true)
			if diff := cmp.Diff([][]string{{"write", "bash"}, nil}, names(conv)); diff != "" {
				t.Errorf("calls per turn (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTurnsScript(t *testing.T) {
	script := fakeprovider.Turns(4, 3, func(turn, i int) model.ToolCall {
		return model.ToolCall{Name: "bash", Args: []byte(fmt.Sprintf(`{"command":"echo %d.%d"}`, turn, i))}
	})
	for _, api := range providers {
		t.Run(api, func(t *testing.T) {
			srv, url := serve(t, script)
			conv := drive(t, dial(t, api, url, testKey), "bench", false)
			if len(conv.Exchanges) != 5 || conv.Exchanges[4].Turn.Text != "done" {
				t.Fatalf("exchanges = %d, last %q; want 4 turns of calls and the text", len(conv.Exchanges), conv.Exchanges[len(conv.Exchanges)-1].Turn.Text)
			}
			for i, ex := range conv.Exchanges[:4] {
				if len(ex.Turn.Calls) != 3 || string(ex.Turn.Calls[2].Args) != fmt.Sprintf(`{"command":"echo %d.2"}`, i) {
					t.Errorf("turn %d calls = %v", i, ex.Turn.Calls)
				}
			}
			// The last request carried all 12 results.
			reqs := srv.Requests()
			got := 0
			for _, ex := range reqs[len(reqs)-1].Conversation.Exchanges {
				got += len(ex.Results)
			}
			if got != 12 {
				t.Errorf("the last request carried %d results, want 12", got)
			}
		})
	}
}

func TestPathsAndMethods(t *testing.T) {
	_, url := serve(t, nil)
	cases := []struct {
		path, header, value string
		want                int
	}{
		{"/v1/chat/completions", "Authorization", "Bearer " + testKey, 200},
		{"/chat/completions", "Authorization", "Bearer " + testKey, 200},
		{"/v1/messages", "x-api-key", testKey, 200},
		{"/messages", "Authorization", "Bearer " + testKey, 200},
		{"/v1/responses", "Authorization", "Bearer nope", 401},
		{"/v1/messages", "x-api-key", "nope", 401},
		{"/v1/embeddings", "Authorization", "Bearer " + testKey, 404},
	}
	bodies := map[string]string{
		"chat":      `{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
		"messages":  `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`,
		"responses": `{"model":"m","input":"hi"}`,
	}
	for _, c := range cases {
		body := bodies["chat"]
		if strings.HasSuffix(c.path, "messages") {
			body = bodies["messages"]
		} else if strings.HasSuffix(c.path, "responses") {
			body = bodies["responses"]
		}
		req, _ := http.NewRequest(http.MethodPost, url+c.path, strings.NewReader(body))
		req.Header.Set(c.header, c.value)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != c.want {
			t.Errorf("POST %s with %s: %d, want %d", c.path, c.header, res.StatusCode, c.want)
		}
	}
}
