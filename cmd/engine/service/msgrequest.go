package service

import (
	"encoding/json"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
)

// msgRequest is a plain NATS message as a micro.Request, so that an
// endpoint's handler also answers on a subject micro does not serve (a
// host's own subject, client.SubjectAt) exactly as it answers on its own.
type msgRequest struct{ m *nats.Msg }

func (r msgRequest) Respond(data []byte, opts ...micro.RespondOpt) error {
	msg := &nats.Msg{Subject: r.m.Reply, Data: data, Header: nats.Header{}}
	for _, o := range opts {
		o(msg)
	}
	return r.m.RespondMsg(msg)
}

func (r msgRequest) RespondJSON(v any, opts ...micro.RespondOpt) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return r.Respond(data, opts...)
}

func (r msgRequest) Error(code, description string, data []byte, opts ...micro.RespondOpt) error {
	msg := &nats.Msg{Subject: r.m.Reply, Data: data, Header: nats.Header{
		micro.ErrorHeader: []string{description}, micro.ErrorCodeHeader: []string{code}}}
	for _, o := range opts {
		o(msg)
	}
	return r.m.RespondMsg(msg)
}

func (r msgRequest) Data() []byte           { return r.m.Data }
func (r msgRequest) Headers() micro.Headers { return micro.Headers(r.m.Header) }
func (r msgRequest) Subject() string        { return r.m.Subject }
func (r msgRequest) Reply() string          { return r.m.Reply }
