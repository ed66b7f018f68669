package projection

import (
	"github.com/stepgate/stepgate/events"
	"github.com/stepgate/stepgate/internal/jsonfast"
)

// appendStep appends the checkpoint form of s: what encoding/json writes for
// a Step, written through jsonfast without reflection (a checkpoint encodes
// every step a host commits; by reflection that was half of the checkpoint's
// cost). A property test holds the two to the same decoded value.
func appendStep(dst []byte, s *Step) ([]byte, error) {
	w := jsonfast.NewWriter(dst)
	w.BeginObject()
	w.Int("n", int64(s.N))
	w.Field("calls")
	if s.Calls == nil {
		w.Null()
	} else {
		w.BeginArray()
		for i := range s.Calls {
			writeCall(&w, &s.Calls[i])
		}
		w.EndArray()
	}
	w.Bool("final", s.Final)
	if s.Host != "" {
		w.String("host", s.Host)
	}
	w.EndObject()
	return w.Bytes()
}

func writeCall(w *jsonfast.Writer, c *Call) {
	w.BeginObject()
	w.String("id", c.ID)
	w.String("tool", c.Tool)
	if len(c.Args) > 0 {
		w.Raw("args", c.Args)
	}
	if c.Identity != "" {
		w.String("identity", c.Identity)
	}
	if c.Decision != nil {
		w.Field("decision")
		events.WritePayload(w, *c.Decision)
	}
	if c.Attempts != 0 {
		w.Int("attempts", int64(c.Attempts))
	}
	if c.Result != nil {
		w.Field("result")
		events.WritePayload(w, *c.Result)
	}
	if c.RanOn != "" {
		w.String("ran_on", c.RanOn)
	}
	if c.Ticket != "" {
		w.String("ticket", c.Ticket)
	}
	w.EndObject()
}
