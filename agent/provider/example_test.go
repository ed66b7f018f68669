package provider_test

import (
	"context"
	"fmt"

	"github.com/stepgate/stepgate/agent/fakeprovider"
	"github.com/stepgate/stepgate/agent/model"
	"github.com/stepgate/stepgate/agent/provider"
)

// A provider against the in-repo fake: the first turn asks for two calls
// in one turn; the loop gives both results back and the model answers.
func ExampleNew() {
	srv := fakeprovider.New(fakeprovider.Config{APIKey: "sk-example",
		Script: fakeprovider.WriteAndBash("hello.txt", "hi", "cat hello.txt")})
	url, stop, err := srv.Start(context.Background())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()
	p, err := provider.New(provider.Anthropic, provider.Options{BaseURL: url, APIKey: "sk-example"})
	if err != nil {
		fmt.Println(err)
		return
	}
	conv := model.Conversation{Task: "Write hello.txt and show it."}
	for {
		turn, err := p.Next(context.Background(), model.Request{Model: "claude-sonnet-4-5", Conversation: conv, Stream: true})
		if err != nil {
			fmt.Println(err)
			return
		}
		ex := model.Exchange{Turn: turn}
		for _, c := range turn.Calls {
			fmt.Println("call", c.Name, string(c.Args))
			ex.Results = append(ex.Results, model.Result{CallID: c.ID, Name: c.Name, Content: "ok"})
		}
		conv.Exchanges = append(conv.Exchanges, ex)
		if len(turn.Calls) == 0 {
			fmt.Println(turn.Text)
			return
		}
	}
	// Output:
	// call write {"content":"hi","path":"hello.txt"}
	// call bash {"command":"cat hello.txt"}
	// Done. write (ok): ok. bash (ok): ok.
}
