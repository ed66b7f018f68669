package events

// The payloads of a run's start commit, read by hand as decode_step.go's
// are: a rebuild meets one per run (the pinned rules and catalogue, the
// largest payloads it reads but a step's).

func (d *decoder) runStarted() Event {
	var e RunStarted
	d.object(4, func(name []byte) bool {
		switch string(name) {
		case "agent":
			d.str(&e.Agent)
		case "location":
			d.str(&e.Location)
		case "project":
			d.str(&e.Project)
		case "rules":
			list(d, &e.Rules, func(r *Rule) { d.rule(r, 6) })
		case "narrowing":
			d.str(&e.Narrowing)
		case "limits":
			d.object(5, func(name []byte) bool {
				switch string(name) {
				case "max_lines":
					d.int(&e.Limits.MaxLines)
				case "max_bytes":
					d.int(&e.Limits.MaxBytes)
				default:
					return false
				}
				return true
			})
		case "policy_sha256":
			d.str(&e.PolicyDigest)
		case "engine_version":
			d.str(&e.EngineVersion)
		case "ticket_ttl_ms":
			d.int64(&e.TicketTTLMs)
		case "forked_from":
			ptr(d, &e.ForkedFrom, d.forkedFrom)
		case "principal":
			d.str(&e.Principal)
		default:
			return false
		}
		return true
	})
	return e
}

// forkedFrom reads a RunStarted's forked_from.
func (d *decoder) forkedFrom(f *ForkedFrom) {
	d.object(5, func(name []byte) bool {
		switch string(name) {
		case "run":
			d.str(&f.Run)
		case "step":
			d.int(&f.Step)
		case "commit":
			d.str(&f.Commit)
		default:
			return false
		}
		return true
	})
}

func (d *decoder) catalogAdvertised() Event {
	var e CatalogAdvertised
	d.object(4, func(name []byte) bool {
		switch string(name) {
		case "fingerprint":
			d.str(&e.Fingerprint)
		case "tools":
			list(d, &e.Tools, func(t *AdvertisedTool) {
				d.object(6, func(name []byte) bool {
					switch string(name) {
					case "name":
						d.str(&t.Name)
					case "identity":
						d.str(&t.Identity)
					default:
						return false
					}
					return true
				})
			})
		default:
			return false
		}
		return true
	})
	return e
}
