package commands

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/stepgate/stepgate/internal/strictjson"
)

// Forwarder carries a request to another host's own subject and returns
// that host's answer (see [Engine.Forwarded]): op's request as JSON, and
// the principal it is answered for (which the receiving host trusts, as
// only the engine's NATS user may publish there). An error that is the
// other host's answer is an [*Error] with its code; any other error means
// the request may not have reached it (no such host alive, no answer in
// time). cmd/engine's service provides it over NATS.
type Forwarder interface {
	Forward(ctx context.Context, host, op, principal string, body []byte) ([]byte, error)
}

// The operations one host forwards to another: the requests that need the
// run's location (see DESIGN.md §8, "Placement").
const (
	OpStartRun    = "start_run"
	OpSubmitStep  = "submit_step"
	OpReply       = "reply"
	OpAutoApprove = "auto_approve"
	OpCheckPlace  = "check_place"
)

// Ops are the forwarded operations, for a transport that serves each.
var Ops = [...]string{OpStartRun, OpSubmitStep, OpReply, OpAutoApprove, OpCheckPlace}

// autoApproveRequest asks a run's holder to approve what the project's
// saved approvals now allow (see replier.autoApprove).
type autoApproveRequest struct {
	Project string `json:"project"`
	Run     string `json:"run"`
	By      string `json:"by"`
}

// forwardedKey marks a context of a forwarded request: it is answered
// here, or refused with ErrNotHolder, never forwarded again.
type forwardedKey struct{}

func isForwarded(ctx context.Context) bool {
	v, _ := ctx.Value(forwardedKey{}).(bool)
	return v
}

// Forwarded answers a request another host forwarded here because this
// host holds the location it needs. A request this host turns out not to
// hold the location for is refused with ErrNotHolder (the sender tries
// another holder); nothing is forwarded on.
func (e *Engine) Forwarded(ctx context.Context, op, principal string, body []byte) ([]byte, error) {
	ctx = context.WithValue(withPrincipal(ctx, principal), forwardedKey{}, true)
	switch op {
	case OpStartRun:
		return answer(ctx, body, e.StartRun)
	case OpSubmitStep:
		return answer(ctx, body, e.SubmitStep)
	case OpReply:
		return answer(ctx, body, e.Reply)
	case OpCheckPlace:
		return answer(ctx, body, e.checkPlace)
	case OpAutoApprove:
		return answer(ctx, body, func(ctx context.Context, req autoApproveRequest) (struct{}, error) {
			// The approval it applies was committed on the sender a moment
			// ago: fold that far first.
			if err := e.syncAll(ctx); err != nil {
				return struct{}{}, err
			}
			return struct{}{}, e.replier.autoApprove(ctx, req.Project, req.Run, req.By)
		})
	}
	return nil, fmt.Errorf("forwarded operation %q: %w", op, ErrInvalidRequest)
}

// answer decodes a forwarded request strictly and encodes fn's answer.
func answer[Req, Resp any](ctx context.Context, raw json.RawMessage, fn func(context.Context, Req) (Resp, error)) ([]byte, error) {
	var req Req
	if err := strictjson.Decode(raw, &req); err != nil {
		return nil, fmt.Errorf("forwarded request: %w: %w", ErrInvalidRequest, err)
	}
	resp, err := fn(ctx, req)
	if err != nil {
		return nil, Translate(err)
	}
	return json.Marshal(resp)
}

// forward sends op's request to the live hosts that declare loc, in turn
// (see fleet.candidates; key spreads runs over a shared volume's holders,
// prefer is tried first), and decodes the first one's answer into resp.
// A host that answers ErrNotHolder, or cannot be reached, is passed over.
// With no host taking it, the error wraps ErrNoExecutor and names why each
// candidate did not, after here: why this host does not hold loc.
func (b *base) forward(ctx context.Context, loc, key, prefer, op string, req, resp any, here error) error {
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("forward %s: %w", op, err)
	}
	whyNot := []string{here.Error()}
	if b.fleet.fwd != nil {
		for _, host := range b.fleet.candidates(loc, key, prefer) {
			out, err := b.fleet.fwd.Forward(ctx, host, op, principalOf(ctx), body)
			if err == nil {
				b.cfg.Metrics.Forwarded(loc)
				return json.Unmarshal(out, resp)
			}
			var e *Error
			if errors.As(err, &e) && e.Code != CodeNotHolder {
				b.cfg.Metrics.Forwarded(loc)
				return err // the holder's answer
			}
			if ctx.Err() != nil {
				return fmt.Errorf("forward %s to %s: %w", op, host, err)
			}
			whyNot = append(whyNot, fmt.Sprintf("%s: %s", host, oneLine(err.Error())))
		}
	}
	b.cfg.Metrics.NoExecutor(loc)
	last := prefer
	if last == "" {
		last = "none"
	}
	return fmt.Errorf("location %s: no live host holds it (last ran on %s): %s: %w", loc, last, strings.Join(whyNot, "; "), ErrNoExecutor)
}

// forwardTo sends op's request to host alone and decodes its answer.
func (b *base) forwardTo(ctx context.Context, host, op string, req, resp any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	out, err := b.fleet.fwd.Forward(ctx, host, op, principalOf(ctx), body)
	if err != nil {
		return err
	}
	return json.Unmarshal(out, resp)
}

// oneLine is s on one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
