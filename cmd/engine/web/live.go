package web

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	sgclient "github.com/stepgate/stepgate/client"
	"github.com/stepgate/stepgate/events"
)

// subscriberBuffer is how many events a live page may fall behind; a page
// further behind is dropped (its EventSource connects again and reloads).
const subscriberBuffer = 256

// hub fans the log's events out to the open pages.
type hub struct {
	mu   sync.Mutex
	subs map[chan sgclient.LiveEvent]struct{}
}

func newHub() *hub { return &hub{subs: map[chan sgclient.LiveEvent]struct{}{}} }

func (h *hub) subscribe() chan sgclient.LiveEvent {
	ch := make(chan sgclient.LiveEvent, subscriberBuffer)
	h.mu.Lock()
	h.subs[ch] = struct{}{}
	h.mu.Unlock()
	return ch
}

func (h *hub) unsubscribe(ch chan sgclient.LiveEvent) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[ch]; ok {
		delete(h.subs, ch)
		close(ch)
	}
}

func (h *hub) publish(ev sgclient.LiveEvent) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		select {
		case ch <- ev:
		default: // too far behind: drop it, it reconnects
			delete(h.subs, ch)
			close(ch)
		}
	}
}

// closeAll ends every open stream (the app stops).
func (h *hub) closeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		delete(h.subs, ch)
		close(ch)
	}
}

// follow reads the log from its end on, publishing what each commit did,
// until ctx ends; a read that fails is retried from where it stopped.
func (h *hub) follow(ctx context.Context, log Follower, lg *slog.Logger) error {
	var next uint64
	for {
		if next == 0 {
			last, err := log.LastSeq(ctx)
			if err == nil {
				next = last + 1
			}
		}
		if next != 0 {
			err := log.Follow(ctx, next, func(seq uint64, subject string, data []byte) error {
				next = seq + 1
				h.commit(seq, data, lg)
				return nil
			})
			if ctx.Err() != nil {
				return nil
			}
			lg.Warn("web: following the log for live updates failed; retrying", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
}

// commit publishes what one commit did.
func (h *hub) commit(seq uint64, data []byte, lg *slog.Logger) {
	c, err := events.Unmarshal(data)
	if err != nil {
		lg.Debug("web: an undecodable message of the log skipped", "seq", seq, "err", err)
		return
	}
	for _, ev := range liveEvents(seq, c) {
		h.publish(ev)
	}
}

// liveEvents is what commit c at seq did, as the live stream tells it.
func liveEvents(seq uint64, c *events.Commit) []sgclient.LiveEvent {
	base := sgclient.LiveEvent{Seq: seq, Run: c.Run, Step: c.Step}
	var out []sgclient.LiveEvent
	grants := false
	for _, e := range c.Events {
		ev := base
		switch e := e.(type) {
		case events.TicketIssued:
			ev.Type, ev.Ticket, ev.Project = sgclient.LiveTicketIssued, e.ID, e.Project
		case events.TicketResolved:
			ev.Type, ev.Ticket = sgclient.LiveTicketResolved, e.Ticket
		case events.RunEnded:
			ev.Type = sgclient.LiveRunEnded
		case events.ApprovalSaved, events.GrantRevoked:
			grants = true
			continue
		default:
			continue
		}
		out = append(out, ev)
	}
	if grants {
		ev := base
		ev.Type = sgclient.LiveGrantsChanged
		out = append(out, ev)
	}
	if c.Run != "" {
		ev := base
		ev.Type = sgclient.LiveRunChanged
		out = append(out, ev)
	}
	return out
}

// heartbeat keeps an idle stream open through proxies.
const heartbeat = 15 * time.Second

// events is GET /api/events: the live stream, as server-sent events.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, sgclient.CodeInternal, "streaming unsupported")
		return
	}
	ch := s.live.subscribe()
	defer s.live.unsubscribe(ch)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": stepgate live\n\n")
	fl.Flush()
	t := time.NewTicker(heartbeat)
	defer t.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-t.C:
			fmt.Fprint(w, ": ping\n\n")
		case ev, open := <-ch:
			if !open {
				return
			}
			b, _ := json.Marshal(ev)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.Type, b)
		}
		fl.Flush()
	}
}
