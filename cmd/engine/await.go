package main

import (
	"context"
	"errors"

	"github.com/stepgate/stepgate/commands"
)

// awaitFinal awaits a step for as long as ctx allows: each await_step
// request waits at most its timeout, and one that times out is sent again.
func awaitFinal(ctx context.Context, api engineAPI, req commands.AwaitRequest) (*commands.StepOutcome, error) {
	for {
		out, err := api.AwaitStep(ctx, req)
		if !errors.Is(err, commands.ErrAwaitTimeout) || ctx.Err() != nil {
			return out, err
		}
	}
}
