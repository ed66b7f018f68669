package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	sgclient "github.com/stepgate/stepgate/client"
)

// maxBody bounds a request's body.
const maxBody = 1 << 20

// tickets is GET /api/tickets?project=&tool=&run=&older_than=&limit=&cursor=:
// a page of pending tickets (the tickets command), oldest first.
func (s *Server) tickets(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	req := sgclient.TicketsRequest{Run: q.Get("run"), Project: q.Get("project"), Tool: q.Get("tool"),
		Ticket: q.Get("ticket"), OlderThan: q.Get("older_than"), Cursor: q.Get("cursor")}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil {
			writeError(w, http.StatusBadRequest, sgclient.CodeInvalidInput, "limit: want a number")
			return
		}
		req.Limit = n
	}
	page, err := s.cfg.API.Tickets(r.Context(), req)
	s.answer(w, page, err)
}

// reply is POST /api/tickets/{id}/reply with a client.ReplyRequest: the
// reply command, as operator:NAME whatever the body says.
func (s *Server) reply(w http.ResponseWriter, r *http.Request) {
	var req sgclient.ReplyRequest
	if !decode(w, r, &req) {
		return
	}
	id := r.PathValue("id")
	if req.Ticket != "" && req.Ticket != id {
		writeError(w, http.StatusBadRequest, sgclient.CodeInvalidInput, "the body's ticket is not the path's")
		return
	}
	who := operatorOf(r.Context())
	req.Ticket, req.Principal = id, who.principal()
	res, err := s.cfg.API.Reply(r.Context(), req)
	if err == nil {
		s.log.Info("web: ticket answered", "ticket", id, "reply", req.Reply, "principal", req.Principal)
	}
	s.answer(w, res, err)
}

// runs is GET /api/runs?status=&agent=: the runs command, filtered.
func (s *Server) runs(w http.ResponseWriter, r *http.Request) {
	runs, err := s.cfg.API.Runs(r.Context())
	if err != nil {
		s.answer(w, nil, err)
		return
	}
	q := r.URL.Query()
	out := make([]sgclient.RunSummary, 0, len(runs))
	for _, run := range runs {
		if st := q.Get("status"); st != "" && run.Status != st {
			continue
		}
		if a := q.Get("agent"); a != "" && run.Agent != a {
			continue
		}
		out = append(out, run)
	}
	writeJSON(w, http.StatusOK, out)
}

// run is GET /api/runs/{id}: the run and its commits' facts.
func (s *Server) run(w http.ResponseWriter, r *http.Request) {
	run, err := s.cfg.API.Show(r.Context(), sgclient.ShowRequest{Run: r.PathValue("id")})
	if err != nil {
		s.answer(w, nil, err)
		return
	}
	facts, err := s.cfg.API.RunFacts(r.Context(), sgclient.RunFactsRequest{Run: run.ID})
	if err != nil {
		s.answer(w, nil, err)
		return
	}
	writeJSON(w, http.StatusOK, sgclient.RunDetail{Run: run, Facts: facts})
}

// report is GET /report/{id}: the run report's page, framed by the run page.
func (s *Server) report(w http.ResponseWriter, r *http.Request) {
	var buf bytes.Buffer
	if err := s.cfg.RunPage(r.Context(), &buf, s.cfg.API, r.PathValue("id")); err != nil {
		status, code := statusOf(err)
		http.Error(w, code+": "+err.Error(), status)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(buf.Bytes())
}

// grants is GET /api/grants?project=: the saved approvals.
func (s *Server) grants(w http.ResponseWriter, r *http.Request) {
	gs, err := s.cfg.API.Grants(r.Context(), sgclient.GrantsRequest{Project: r.URL.Query().Get("project")})
	if err == nil && gs == nil {
		gs = []sgclient.Grant{}
	}
	s.answer(w, gs, err)
}

// revoke is POST /api/grants/{id}/revoke: the revoke_grant command, as
// operator:NAME.
func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	req := sgclient.RevokeRequest{ID: r.PathValue("id"), Principal: operatorOf(r.Context()).principal()}
	g, err := s.cfg.API.RevokeGrant(r.Context(), req)
	if err == nil {
		s.log.Info("web: grant revoked", "grant", req.ID, "principal", req.Principal)
	}
	s.answer(w, g, err)
}

// decode reads the body's one JSON value strictly into v, or answers 400.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, extra := dec.Token(); !errors.Is(extra, io.EOF) {
			err = errors.New("more than one JSON value")
		}
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, sgclient.CodeInvalidInput, fmt.Sprintf("request body: %v", err))
		return false
	}
	return true
}

// answer writes v, or err with its code and a status that fits it.
func (s *Server) answer(w http.ResponseWriter, v any, err error) {
	if err != nil {
		status, code := statusOf(err)
		if status == http.StatusInternalServerError {
			s.log.Error("web: request failed", "err", err)
		}
		writeError(w, status, code, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// statusOf maps an API error's stable code to an HTTP status.
func statusOf(err error) (int, string) {
	code := sgclient.Code(err)
	switch code {
	case sgclient.CodeInvalidInput, sgclient.CodeTicketKind:
		return http.StatusBadRequest, code
	case sgclient.CodeRunNotFound, sgclient.CodeTicketNotFound, sgclient.CodeGrantNotFound:
		return http.StatusNotFound, code
	case sgclient.CodeTicketResolved, sgclient.CodeTicketExpired, sgclient.CodeTicketStale, sgclient.CodeConflict,
		sgclient.CodeRunNotActive, sgclient.CodeStepOrder, sgclient.CodeRunDiverged:
		return http.StatusConflict, code
	case sgclient.CodeUnavailable, sgclient.CodeAwaitTimeout:
		return http.StatusServiceUnavailable, code
	case "", sgclient.CodeInternal:
		return http.StatusInternalServerError, sgclient.CodeInternal
	}
	// Another stable code (a newer engine's refusal, such as an edit the
	// gate refuses): the request was refused as it stands.
	return http.StatusUnprocessableEntity, code
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, sgclient.WebError{Code: code, Message: msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
