package config

import (
	"slices"

	"github.com/goccy/go-yaml/ast"
	"github.com/stepgate/stepgate/gate"
)

// Webhook event names (notify[].events).
const (
	EventTicketIssued   = "ticket_issued"
	EventTicketResolved = "ticket_resolved"
	EventRunEnded       = "run_ended"
)

// webhookEvents are the events a webhook may subscribe to.
var webhookEvents = []string{EventTicketIssued, EventTicketResolved, EventRunEnded}

// Webhook is one entry of the user's notify: section: where to POST which
// lifecycle events, signed with a secret. Only the user's file declares
// webhooks.
type Webhook struct {
	// URL is the receiver: http or https, with a host and no credentials.
	URL string `json:"url"`
	// Secret signs every delivery (HMAC-SHA256). As written: a value, or
	// one holding secret://NAME references, resolved when the deliverer
	// starts (see [Secrets]); never stored resolved here.
	Secret string `json:"-"`
	// Events are the events delivered, in file order, each once.
	Events []string `json:"events"`
	// IncludeArgs adds the call's arguments (ticket_issued) and the
	// reply's message and answers (ticket_resolved) to the payload.
	IncludeArgs bool `json:"include_args,omitempty"`
	// File and Line are where the entry is declared, for errors.
	File string `json:"file"`
	Line int    `json:"line"`
}

// Webhooks are the layer's notify: entries, in file order.
func (f *File) Webhooks() []Webhook { return slices.Clone(f.notify) }

// Webhooks reads the user's file and returns its webhooks; none when there
// is no user's file. Project files are not read: they may not declare any.
func (l Loader) Webhooks() ([]Webhook, error) {
	f, err := l.userLayer()
	if err != nil || f == nil {
		return nil, err
	}
	return f.Webhooks(), nil
}

// notifySection is notify: a list of webhooks. The user's file only.
type notifySection []Webhook

func (ns *notifySection) decode(s state, n ast.Node) error {
	if s.source != gate.SourceUser {
		return s.failKey("only the user's file may declare webhooks (a project file could send your runs' tools, arguments and replies to a server of its choosing; this is a %s file)", s.source.Label())
	}
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		return s.fail(n, "want a list of webhooks: [{url, secret, events}]")
	}
	for i, item := range seq.Values {
		is := s.index(i)
		var e webhookEntry
		if err := fields(is, item, &e, "unknown key (want url, secret, events or include_args)"); err != nil {
			return err
		}
		switch {
		case !e.URL.set:
			return is.fail(item, "want url: where to POST the events")
		case !e.Secret.set:
			return is.fail(item, "want secret: every delivery is signed (a value, or secret://NAME)")
		case !e.Events.set:
			return is.fail(item, "want events: a list of %v", webhookEvents)
		}
		*ns = append(*ns, Webhook{URL: e.URL.text, Secret: e.Secret.text, Events: e.Events.names,
			IncludeArgs: e.IncludeArgs.v, File: s.file, Line: line(item)})
	}
	return nil
}

// webhookEntry is notify[i].
type webhookEntry struct {
	// The receiver's URL: http or https, no credentials.
	URL webhookURL `yaml:"url"`
	// The key the deliveries are signed with, or secret://NAME.
	Secret webhookSecret `yaml:"secret"`
	// The events the receiver gets, each once (ticket_issued, …).
	Events webhookNames `yaml:"events"`
	// true: deliveries carry the calls' arguments.
	IncludeArgs flag `yaml:"include_args"`
}

// webhookURL is a receiver's URL: http or https, a host, no credentials,
// no secret reference, no fragment.
type webhookURL struct{ plain }

func (u *webhookURL) decode(s state, n ast.Node) error {
	if err := u.read(s, n, "want a URL"); err != nil {
		return err
	}
	return checkHTTPURL(s, n, u.text, true, "the secret signs the payload", "the secret signs the payload")
}

// webhookSecret is the signing secret: a value, or one with secret://NAME
// references; not empty.
type webhookSecret struct{ plain }

func (w *webhookSecret) decode(s state, n ast.Node) error {
	if err := w.read(s, n, "want a secret: a value, or secret://NAME"); err != nil {
		return err
	}
	if w.text == "" {
		return s.fail(n, "want a secret: a value, or secret://NAME (an empty secret signs nothing)")
	}
	if _, err := SecretRefs(w.text); err != nil {
		return s.fail(n, "%v", err)
	}
	return nil
}

// webhookNames is events: a non-empty list of known event names, each once.
type webhookNames struct {
	names []string
	set   bool
}

func (w *webhookNames) decode(s state, n ast.Node) error {
	seq, ok := n.(*ast.SequenceNode)
	if !ok || len(seq.Values) == 0 {
		return s.fail(n, "want a non-empty list of %v", webhookEvents)
	}
	for i, item := range seq.Values {
		text, ok := scalar(item)
		if !ok || !slices.Contains(webhookEvents, text) {
			return s.index(i).fail(item, "want one of %v", webhookEvents)
		}
		if slices.Contains(w.names, text) {
			return s.index(i).fail(item, "event %s is listed twice", text)
		}
		w.names = append(w.names, text)
	}
	w.set = true
	return nil
}
