package step

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// leaderGetWait bounds a leader read whose ctx has no deadline, as the
// JetStream client bounds its own API requests.
const leaderGetWait = 5 * time.Second

// msgGet is a request of the stream message get API: the message at Seq,
// the last message on LastFor, or the first message on NextFor at Seq or
// later.
type msgGet struct {
	Seq     uint64 `json:"seq,omitempty"`
	LastFor string `json:"last_by_subj,omitempty"`
	NextFor string `json:"next_by_subj,omitempty"`
}

// leaderGet asks the stream's leader for one message (the stream message
// get API, which only the leader answers, unlike a direct get, which any
// replica answers from what it has applied so far). found is false when the
// stream holds no such message. The message's headers are decoded.
func (l *Log) leaderGet(ctx context.Context, req msgGet) (m *jetstream.RawStreamMsg, found bool, err error) {
	b, err := json.Marshal(req)
	if err != nil {
		return nil, false, err
	}
	if _, ok := ctx.Deadline(); !ok {
		// An answer can be lost (the leader's node went down after it took
		// the request): without a deadline the request would wait forever.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, leaderGetWait)
		defer cancel()
	}
	msg, err := l.js.Conn().RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET."+l.cfg.Name, b)
	if err != nil {
		return nil, false, err
	}
	var resp struct {
		Message *struct {
			Subject string `json:"subject"`
			Seq     uint64 `json:"seq"`
			Header  []byte `json:"hdrs"`
			Data    []byte `json:"data"`
		} `json:"message"`
		Error *jetstream.APIError `json:"error"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return nil, false, fmt.Errorf("stream message get: %w", err)
	}
	if resp.Error != nil {
		if resp.Error.ErrorCode == jetstream.JSErrCodeMessageNotFound {
			return nil, false, nil
		}
		return nil, false, resp.Error
	}
	if resp.Message == nil {
		return nil, false, fmt.Errorf("stream message get: empty answer")
	}
	raw := &jetstream.RawStreamMsg{Subject: resp.Message.Subject, Sequence: resp.Message.Seq, Data: resp.Message.Data}
	if len(resp.Message.Header) > 0 {
		if raw.Header, err = nats.DecodeHeadersMsg(resp.Message.Header); err != nil {
			return nil, false, fmt.Errorf("stream message get: sequence %d: %w", raw.Sequence, err)
		}
	}
	return raw, true, nil
}
