package projection

import (
	"strconv"

	"github.com/stepgate/stepgate/events"
)

// appendStep appends the checkpoint form of s: what encoding/json writes for
// a Step, written without reflection (a checkpoint encodes every step a host
// commits; by reflection that was half of the checkpoint's cost). A property
// test holds the two to the same decoded value.
func appendStep(dst []byte, s *Step) ([]byte, error) {
	b := strconv.AppendInt(append(dst, `{"n":`...), int64(s.N), 10)
	b = append(b, `,"calls":`...)
	if s.Calls == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range s.Calls {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendCall(b, &s.Calls[i]); err != nil {
				return nil, err
			}
		}
		b = append(b, ']')
	}
	b = strconv.AppendBool(append(b, `,"final":`...), s.Final)
	if s.Host != "" {
		b = events.AppendString(append(b, `,"host":`...), s.Host)
	}
	return append(b, '}'), nil
}

func appendCall(b []byte, c *Call) ([]byte, error) {
	var err error
	b = events.AppendString(append(b, `{"id":`...), c.ID)
	b = events.AppendString(append(b, `,"tool":`...), c.Tool)
	if len(c.Args) > 0 {
		if b, err = events.AppendRaw(append(b, `,"args":`...), c.Args); err != nil {
			return nil, err
		}
	}
	if c.Identity != "" {
		b = events.AppendString(append(b, `,"identity":`...), c.Identity)
	}
	if c.Decision != nil {
		if b, err = events.AppendPayload(append(b, `,"decision":`...), *c.Decision); err != nil {
			return nil, err
		}
	}
	if c.Attempts != 0 {
		b = strconv.AppendInt(append(b, `,"attempts":`...), int64(c.Attempts), 10)
	}
	if c.Result != nil {
		if b, err = events.AppendPayload(append(b, `,"result":`...), *c.Result); err != nil {
			return nil, err
		}
	}
	if c.Ticket != "" {
		b = events.AppendString(append(b, `,"ticket":`...), c.Ticket)
	}
	return append(b, '}'), nil
}
