package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"time"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/stepgate/stepgate/gate"
)

// File is one configuration layer.
type File struct {
	// Path the layer was read from ("" for the built-in defaults).
	Path string
	// Agents maps an agent's name to its rules in this layer, in file order.
	Agents map[string]gate.Ruleset
	// TicketTTL maps an agent's name to how long its confirmations wait for
	// an answer (agents.NAME.ticket_ttl), when this layer says.
	TicketTTL map[string]time.Duration
	// MaxLines and MaxBytes bound tool output (tool_output.max_lines /
	// max_bytes); 0 when the layer does not say.
	MaxLines, MaxBytes int
	// WebsearchEndpoint is websearch.endpoint; "" when not set.
	WebsearchEndpoint string
	// ProtectAdd and ProtectRemove are protected_paths.add and .remove:
	// path patterns (see gate.MatchPath) protected in addition to the
	// defaults, and defaults no longer protected. Only the user's file may
	// remove.
	ProtectAdd, ProtectRemove []string
	// alwaysProtected are protected whatever any file says (the user's
	// file itself).
	alwaysProtected []string
}

// Load reads the file at path as a layer with the given source. A missing
// file is no layer (nil, nil).
func Load(path string, source gate.Source) (*File, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read configuration %s: %w: %w", path, ErrInvalid, err)
	}
	return Parse(path, data, source)
}

// Parse reads one layer from YAML or JSON text.
//
//	agents:
//	  build:
//	    permission:
//	      "*": allow
//	      read: { "*": allow, "*.env": ask }
//	      bash: [{ resource: "git status *", effect: allow }]   # the list form
//	tool_output: { max_lines: 2000, max_bytes: 51200 }
//	websearch: { endpoint: "http://127.0.0.1:8080/search" }
//	protected_paths: { add: ["secrets/**"], remove: [".git/**"] }   # remove: the user's file only
func Parse(path string, data []byte, source gate.Source) (*File, error) {
	f := &File{Path: path, Agents: map[string]gate.Ruleset{}}
	doc, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, &Error{File: path, Line: errLine(err), Key: "(document)", Msg: err.Error()}
	}
	p := &reader{file: path, source: source}
	for _, d := range doc.Docs {
		if d.Body == nil {
			continue
		}
		if err := p.top(f, d.Body); err != nil {
			return nil, err
		}
	}
	return f, nil
}

type reader struct {
	file   string
	source gate.Source
}

func (p *reader) fail(n ast.Node, key, format string, a ...any) error {
	line := 0
	if n != nil && n.GetToken() != nil && n.GetToken().Position != nil {
		line = n.GetToken().Position.Line
	}
	return &Error{File: p.file, Line: line, Key: key, Msg: fmt.Sprintf(format, a...)}
}

// each calls fn for every key of a mapping node, in order.
func (p *reader) each(n ast.Node, key string, fn func(k string, kn, v ast.Node) error) error {
	m, ok := n.(ast.MapNode)
	if !ok {
		return p.fail(n, key, "want a mapping")
	}
	it := m.MapRange()
	for it.Next() {
		kn := it.Key()
		k, ok := scalar(kn)
		if !ok {
			return p.fail(kn, key, "a key must be a plain value")
		}
		if err := fn(k, kn, it.Value()); err != nil {
			return err
		}
	}
	return nil
}

func (p *reader) top(f *File, body ast.Node) error {
	return p.each(body, "(top)", func(k string, kn, v ast.Node) error {
		switch k {
		case "agents":
			return p.each(v, "agents", func(name string, _, av ast.Node) error {
				return p.agent(f, name, av)
			})
		case "tool_output":
			return p.each(v, "tool_output", func(k2 string, kn2, v2 ast.Node) error {
				key := "tool_output." + k2
				n, err := p.positive(v2, key)
				if err != nil {
					return err
				}
				switch k2 {
				case "max_lines":
					f.MaxLines = n
				case "max_bytes":
					f.MaxBytes = n
				default:
					return p.fail(kn2, key, "unknown key")
				}
				return nil
			})
		case "protected_paths":
			return p.protectedPaths(f, v)
		case "websearch":
			return p.each(v, "websearch", func(k2 string, kn2, v2 ast.Node) error {
				if k2 != "endpoint" {
					return p.fail(kn2, "websearch."+k2, "unknown key")
				}
				s, ok := scalar(v2)
				if !ok {
					return p.fail(v2, "websearch.endpoint", "want a URL")
				}
				f.WebsearchEndpoint = s
				return nil
			})
		}
		return p.fail(kn, k, "unknown key")
	})
}

func (p *reader) agent(f *File, name string, n ast.Node) error {
	key := "agents." + name
	return p.each(n, key, func(k string, kn, v ast.Node) error {
		switch k {
		case "permission":
		case "ticket_ttl":
			s, _ := scalar(v)
			d, err := time.ParseDuration(s)
			if err != nil || d <= 0 {
				return p.fail(v, key+".ticket_ttl", "want a positive duration such as 30m")
			}
			if f.TicketTTL == nil {
				f.TicketTTL = map[string]time.Duration{}
			}
			f.TicketTTL[name] = d // it does not define the agent: its rules do
			return nil
		default:
			return p.fail(kn, key+"."+k, "unknown key")
		}
		rules, err := p.permission(v, key+".permission")
		if err != nil {
			return err
		}
		f.Agents[name] = append(f.Agents[name], rules...)
		return nil
	})
}

// permission reads the shorthand map or the explicit list.
func (p *reader) permission(n ast.Node, key string) (gate.Ruleset, error) {
	if seq, ok := n.(*ast.SequenceNode); ok {
		var rules gate.Ruleset
		for i, item := range seq.Values {
			r, err := p.listRule(item, key+"["+strconv.Itoa(i)+"]")
			if err != nil {
				return nil, err
			}
			rules = append(rules, r)
		}
		return rules, nil
	}
	var rules gate.Ruleset
	err := p.each(n, key, func(action string, _, v ast.Node) error {
		akey := key + "." + action
		if eff, ok := scalar(v); ok {
			e, err := p.effect(v, akey, eff)
			if err != nil {
				return err
			}
			rules = append(rules, gate.Rule{Action: action, Resource: "*", Effect: e, Source: p.source})
			return nil
		}
		return p.each(v, akey, func(resource string, _, rv ast.Node) error {
			s, _ := scalar(rv)
			e, err := p.effect(rv, akey+"."+resource, s)
			if err != nil {
				return err
			}
			rules = append(rules, gate.Rule{Action: action, Resource: resource, Effect: e, Source: p.source})
			return nil
		})
	})
	return rules, err
}

func (p *reader) listRule(n ast.Node, key string) (gate.Rule, error) {
	r := gate.Rule{Resource: "*", Source: p.source}
	var effect string
	err := p.each(n, key, func(k string, kn, v ast.Node) error {
		s, ok := scalar(v)
		if !ok {
			return p.fail(v, key+"."+k, "want a plain value")
		}
		switch k {
		case "action":
			r.Action = s
		case "resource":
			r.Resource = s
		case "effect":
			effect = s
		case "ticket_ttl":
			r.TicketTTL = s
		default:
			return p.fail(kn, key+"."+k, "unknown key")
		}
		return nil
	})
	if err != nil {
		return r, err
	}
	if r.Action == "" {
		return r, p.fail(n, key+".action", "an action is required")
	}
	r.Effect, err = p.effect(n, key+".effect", effect)
	return r, err
}

func (p *reader) effect(n ast.Node, key, s string) (gate.Effect, error) {
	e := gate.Effect(s)
	if !e.Valid() {
		return "", p.fail(n, key, "effect %q: want allow, deny or ask", s)
	}
	return e, nil
}

func (p *reader) positive(n ast.Node, key string) (int, error) {
	s, ok := scalar(n)
	v, err := strconv.Atoi(s)
	if !ok || err != nil || v <= 0 {
		return 0, p.fail(n, key, "want a positive whole number, got %q", s)
	}
	return v, nil
}

// scalar returns the text of a plain value node.
func scalar(n ast.Node) (string, bool) {
	switch n := n.(type) {
	case *ast.StringNode:
		return n.Value, true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.NullNode, *ast.LiteralNode:
		return n.GetToken().Value, true
	}
	return "", false
}

// errLine reads the line out of a parser error, which starts "[line:col]";
// 0 when it does not.
func errLine(err error) int {
	var line int
	if _, scanErr := fmt.Sscanf(err.Error(), "[%d:", &line); scanErr != nil {
		return 0
	}
	return line
}
