package events

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// appender is implemented by the payloads written on every step. They encode
// themselves without reflection: the hot path of a commit. The output decodes
// to the same value as encoding/json's; a property test holds them together.
type appender interface {
	appendJSON(b []byte) ([]byte, error)
}

// appendRaw appends a JSON value held as raw bytes, refusing bytes that are
// not JSON: a commit is never stored unreadable.
func appendRaw(b []byte, name string, raw []byte) ([]byte, error) {
	b, err := AppendRaw(appendKey(b, name, false), raw)
	if err != nil {
		return nil, fmt.Errorf("field %s: %w", name, err)
	}
	return b, nil
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD, as
// encoding/json does.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if i+8 <= len(s) {
			w := s[i : i+8]
			if plain8(uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
				uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56) {
				i += 8
				continue
			}
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// plain8 reports whether none of the 8 bytes packed in x needs escaping:
// each is printable ASCII other than '"' and '\\'. It tests the 8 at once.
func plain8(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	control := (x - ones*0x20) & ^x & highs // a byte below 0x20 (exact when no byte has its high bit)
	q := x ^ (ones * '"')
	quote := (q - ones) & ^q & highs
	bs := x ^ (ones * '\\')
	backslash := (bs - ones) & ^bs & highs
	return (x&highs)|control|quote|backslash == 0
}

// appendKey appends `,"name":` (or without the comma when first).
func appendKey(b []byte, name string, first bool) []byte {
	if !first {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, name...)
	return append(b, '"', ':')
}

func appendStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

func (e ToolCallRequested) appendJSON(b []byte) ([]byte, error) {
	b = append(b, '{')
	b = appendString(appendKey(b, "call_id", true), e.CallID)
	b = appendString(appendKey(b, "tool", false), e.Tool)
	if len(e.Args) > 0 {
		var err error
		if b, err = appendRaw(b, "args", e.Args); err != nil {
			return nil, err
		}
	}
	if e.Identity != "" {
		b = appendString(appendKey(b, "identity", false), e.Identity)
	}
	return append(b, '}'), nil
}

func (r Rule) appendJSON(b []byte) []byte {
	b = append(b, '{')
	b = appendString(appendKey(b, "action", true), r.Action)
	b = appendString(appendKey(b, "resource", false), r.Resource)
	b = appendString(appendKey(b, "effect", false), r.Effect)
	if r.Source != "" {
		b = appendString(appendKey(b, "source", false), r.Source)
	}
	if r.TicketTTL != "" {
		b = appendString(appendKey(b, "ticket_ttl", false), r.TicketTTL)
	}
	return append(b, '}')
}

func (r Request) appendJSON(b []byte) []byte {
	b = append(b, '{')
	b = appendString(appendKey(b, "action", true), r.Action)
	b = appendStrings(appendKey(b, "resources", false), r.Resources)
	if len(r.Save) > 0 {
		b = appendStrings(appendKey(b, "save", false), r.Save)
	}
	if r.Ask {
		b = append(appendKey(b, "ask", false), "true"...)
	}
	return append(b, '}')
}

func (e PermissionDecided) appendJSON(b []byte) ([]byte, error) {
	b = append(b, '{')
	b = appendString(appendKey(b, "call_id", true), e.CallID)
	b = appendString(appendKey(b, "verdict", false), e.Verdict)
	if e.Reason != "" {
		b = appendString(appendKey(b, "reason", false), e.Reason)
	}
	if e.Rule != nil {
		b = e.Rule.appendJSON(appendKey(b, "rule", false))
	}
	if len(e.Requests) > 0 {
		b = append(appendKey(b, "requests", false), '[')
		for i, r := range e.Requests {
			if i > 0 {
				b = append(b, ',')
			}
			b = r.appendJSON(b)
		}
		b = append(b, ']')
	}
	if e.Observed != "" {
		b = appendString(appendKey(b, "observed", false), e.Observed)
	}
	if len(e.Paths) > 0 {
		b = append(appendKey(b, "paths", false), '[')
		for i, p := range e.Paths {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(appendKey(append(b, '{'), "path", true), p.Path)
			b = append(appendString(appendKey(b, "real", false), p.Real), '}')
		}
		b = append(b, ']')
	}
	return append(b, '}'), nil
}

func (e ToolCallStarted) appendJSON(b []byte) ([]byte, error) {
	b = append(b, '{')
	b = appendString(appendKey(b, "call_id", true), e.CallID)
	b = strconv.AppendInt(appendKey(b, "attempt", false), int64(e.Attempt), 10)
	return append(b, '}'), nil
}

func (p Part) appendJSON(b []byte) []byte {
	b = append(b, '{')
	b = appendString(appendKey(b, "type", true), p.Type)
	if p.Text != "" {
		b = appendString(appendKey(b, "text", false), p.Text)
	}
	if p.MIME != "" {
		b = appendString(appendKey(b, "mime", false), p.MIME)
	}
	if len(p.Data) > 0 {
		b = append(appendKey(b, "data", false), '"')
		b = base64.StdEncoding.AppendEncode(b, p.Data)
		b = append(b, '"')
	}
	return append(b, '}')
}

func (e ToolResultRecorded) appendJSON(b []byte) ([]byte, error) {
	b = append(b, '{')
	b = appendString(appendKey(b, "call_id", true), e.CallID)
	b = appendKey(b, "parts", false)
	if e.Parts == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, p := range e.Parts {
			if i > 0 {
				b = append(b, ',')
			}
			b = p.appendJSON(b)
		}
		b = append(b, ']')
	}
	if len(e.Structured) > 0 {
		var err error
		if b, err = appendRaw(b, "structured", e.Structured); err != nil {
			return nil, err
		}
	}
	if e.IsError {
		b = append(appendKey(b, "is_error", false), "true"...)
	}
	if len(e.Files) > 0 {
		b = appendStrings(appendKey(b, "files", false), e.Files)
	}
	return append(b, '}'), nil
}

func (e StepFinalized) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"calls":`...)
	b = strconv.AppendInt(b, int64(e.Calls), 10)
	return append(b, '}'), nil
}
