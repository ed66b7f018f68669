package step

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// leaderGet asks the stream's leader for one message (the stream message
// get API, which only the leader answers, unlike a direct get, which any
// replica answers from what it has applied so far). The request names a
// sequence (seq > 0) or the last message of subject. found is false when
// the stream holds no such message.
func (l *Log) leaderGet(ctx context.Context, seq uint64, subject string) (m *jetstream.RawStreamMsg, found bool, err error) {
	req := struct {
		Seq     uint64 `json:"seq,omitempty"`
		LastFor string `json:"last_by_subj,omitempty"`
	}{seq, subject}
	b, err := json.Marshal(req)
	if err != nil {
		return nil, false, err
	}
	msg, err := l.js.Conn().RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET."+l.cfg.Name, b)
	if err != nil {
		return nil, false, err
	}
	var resp struct {
		Message *struct {
			Subject string `json:"subject"`
			Seq     uint64 `json:"seq"`
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
	return &jetstream.RawStreamMsg{Subject: resp.Message.Subject, Sequence: resp.Message.Seq, Data: resp.Message.Data}, true, nil
}
