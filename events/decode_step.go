package events

import "encoding/json"

// The payloads every step writes (append.go), read by hand: the hot path
// of a rebuild. Each reads its type's fields as encoding/json reads them
// into it (see decoder); a payload's members are held by 4 containers (the
// commit, its events, the event, the payload), a member's elements by 6.

func (d *decoder) toolCallRequested() Event {
	var e ToolCallRequested
	d.object(4, func(name []byte) bool {
		switch string(name) {
		case "call_id":
			d.str(&e.CallID)
		case "tool":
			d.str(&e.Tool)
		case "args":
			d.raw(&e.Args, 4)
		case "identity":
			d.str(&e.Identity)
		default:
			return false
		}
		return true
	})
	return e
}

func (d *decoder) permissionDecided() Event {
	var e PermissionDecided
	d.object(4, func(name []byte) bool {
		switch string(name) {
		case "call_id":
			d.str(&e.CallID)
		case "verdict":
			d.sym(&e.Verdict)
		case "reason":
			d.str(&e.Reason)
		case "rule":
			ptr(d, &e.Rule, func(r *Rule) { d.rule(r, 5) })
		case "requests":
			list(d, &e.Requests, d.request)
		case "observed":
			d.str(&e.Observed)
		case "paths":
			list(d, &e.Paths, d.resolvedPath)
		default:
			return false
		}
		return true
	})
	return e
}

// rule reads a Rule whose members are held by depth containers.
func (d *decoder) rule(r *Rule, depth int) {
	d.object(depth, func(name []byte) bool {
		switch string(name) {
		case "action":
			d.sym(&r.Action)
		case "resource":
			d.sym(&r.Resource)
		case "effect":
			d.sym(&r.Effect)
		case "source":
			d.sym(&r.Source)
		case "ticket_ttl":
			d.str(&r.TicketTTL)
		default:
			return false
		}
		return true
	})
}

// request reads an element of a payload's requests.
func (d *decoder) request(r *Request) {
	d.object(6, func(name []byte) bool {
		switch string(name) {
		case "action":
			d.str(&r.Action)
		case "resources":
			d.strs(&r.Resources)
		case "save":
			list(d, &r.Save, d.sym)
		case "ask":
			d.bool(&r.Ask)
		case "root":
			d.str(&r.Root)
		default:
			return false
		}
		return true
	})
}

// resolvedPath reads an element of a payload's paths.
func (d *decoder) resolvedPath(p *ResolvedPath) {
	d.object(6, func(name []byte) bool {
		switch string(name) {
		case "path":
			d.str(&p.Path)
		case "real":
			d.str(&p.Real)
		default:
			return false
		}
		return true
	})
}

func (d *decoder) toolCallStarted() Event {
	var e ToolCallStarted
	d.object(4, func(name []byte) bool {
		switch string(name) {
		case "call_id":
			d.str(&e.CallID)
		case "attempt":
			d.int(&e.Attempt)
		default:
			return false
		}
		return true
	})
	return e
}

func (d *decoder) toolResultRecorded() Event {
	var e ToolResultRecorded
	d.object(4, func(name []byte) bool {
		switch string(name) {
		case "call_id":
			d.str(&e.CallID)
		case "parts":
			list(d, &e.Parts, d.part)
		case "structured":
			d.raw(&e.Structured, 4)
		case "is_error":
			d.bool(&e.IsError)
		case "files":
			d.strs(&e.Files)
		case "found":
			d.str(&e.Found)
		case "left":
			d.str(&e.Left)
		case "sandbox":
			var raw json.RawMessage
			d.raw(&raw, 5)
			if !d.bad && string(raw) != "null" {
				e.Sandbox = new(SandboxRecord)
				d.bad = json.Unmarshal(raw, e.Sandbox) != nil
			}
		default:
			return false
		}
		return true
	})
	return e
}

// part reads an element of a result's parts.
func (d *decoder) part(p *Part) {
	d.object(6, func(name []byte) bool {
		switch string(name) {
		case "type":
			d.sym(&p.Type)
		case "text":
			d.str(&p.Text)
		case "mime":
			d.str(&p.MIME)
		case "data":
			d.base64(&p.Data)
		default:
			return false
		}
		return true
	})
}

func (d *decoder) stepFinalized() Event {
	var e StepFinalized
	d.object(4, func(name []byte) bool {
		if string(name) != "calls" {
			return false
		}
		d.int(&e.Calls)
		return true
	})
	return e
}
