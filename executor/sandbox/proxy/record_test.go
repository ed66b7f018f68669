package proxy

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestEveryConnectionRecorded(t *testing.T) {
	a := startUpstream(t, "A")
	_, qport := quietListener(t)
	h := startProxy(t, Config{Allow: []string{hp("allowed.test", a.port), hp("*.wild.test", qport)}},
		map[string][]string{"allowed.test": {"127.0.0.1"}, "in.wild.test": {"10.0.0.7"}})
	steps := []struct{ method, raw string }{
		{"CONNECT", connectReq(hp("allowed.test", a.port))},
		{"GET", getReq(hp("allowed.test", a.port), "/x")},
		{"CONNECT", connectReq(hp("unlisted.test", qport))},
		{"GET", getReq(hp("127.0.0.1", qport), "/")},
		{"CONNECT", connectReq(hp("in.wild.test", qport))},
		{"GET", "GET /origin HTTP/1.1\r\nHost: allowed.test\r\n\r\n"},
		{"GET", getReq(hp("nowhere.wild.test", qport), "/")},
	}
	for i, s := range steps {
		c := h.dial(t)
		if resp, _ := c.roundTrip(t, s.method, s.raw); s.method == "CONNECT" && resp.StatusCode == 200 {
			getInTunnel(t, c, hp("allowed.test", a.port), "/in")
		}
		c.Close()
		h.waitRecords(t, i+1) // one at a time, so the order is the steps'
	}
	ap, qp := hp("allowed.test", a.port), qport
	want := []Conn{
		{Form: FormConnect, Method: "CONNECT", Authority: ap, Rule: ap, IP: "127.0.0.1", Verdict: Allowed, Status: 200},
		{Form: FormAbsolute, Method: "GET", Authority: ap, Rule: ap, IP: "127.0.0.1", Verdict: Allowed, Status: 200},
		{Form: FormConnect, Method: "CONNECT", Authority: hp("unlisted.test", qp), Verdict: Refused, Code: CodeNotAllowed, Status: 403},
		{Form: FormAbsolute, Method: "GET", Authority: hp("127.0.0.1", qp), IP: "127.0.0.1", Verdict: Refused, Code: CodeIPLiteral, Status: 403},
		{Form: FormConnect, Method: "CONNECT", Authority: hp("in.wild.test", qp), IP: "10.0.0.7", Verdict: Refused, Code: CodePrivateAddress, Status: 403},
		{Form: FormOrigin, Method: "GET", Authority: "allowed.test", Verdict: Refused, Code: CodeBadRequest, Status: 400},
		{Form: FormAbsolute, Method: "GET", Authority: hp("nowhere.wild.test", qp), Verdict: Refused, Code: CodeResolveFailed, Status: 502},
	}
	got := h.records()
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(Conn{}, "Reason", "BytesUp", "BytesDown", "Error")); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	for i, r := range got {
		if r.Reason == "" && r.Verdict == Refused {
			t.Errorf("record %d refused without a reason", i)
		}
		if r.BytesDown == 0 {
			t.Errorf("record %d: no bytes down (the answer, or the tunnel's bytes)", i)
		}
		if _, err := json.Marshal(r); err != nil {
			t.Errorf("record %d: %v", i, err)
		}
	}
	if got[0].BytesUp == 0 || got[1].BytesUp == 0 {
		t.Errorf("allowed exchanges with no bytes up: %+v %+v", got[0], got[1])
	}
}
