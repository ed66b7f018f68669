package events_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stepgate/stepgate/events"
)

// BenchmarkAppendEncodingJSON is the A/B of the commit's fast path: the
// commit of BenchmarkAppend written by encoding/json, by reflection, in the
// same stored form.
func BenchmarkAppendEncodingJSON(b *testing.B) {
	type event struct {
		Type string `json:"type"`
		V    int    `json:"v"`
		Data any    `json:"data,omitempty"`
	}
	type commit struct {
		ID     string      `json:"id"`
		Run    string      `json:"run,omitempty"`
		Step   int         `json:"step,omitempty"`
		Kind   events.Kind `json:"kind"`
		At     time.Time   `json:"at"`
		Host   string      `json:"host,omitempty"`
		Prev   string      `json:"prev,omitempty"`
		Events []event     `json:"events"`
	}
	c := benchCommit()
	b.ReportAllocs()
	for b.Loop() {
		w := commit{ID: c.ID, Run: c.Run, Step: c.Step, Kind: c.Kind, At: c.At, Host: c.Host, Prev: c.Prev,
			Events: make([]event, len(c.Events))}
		for i, e := range c.Events {
			w.Events[i] = event{Type: e.EventType(), V: events.EventVersion(e), Data: e}
		}
		if _, err := json.Marshal(&w); err != nil {
			b.Fatal(err)
		}
	}
}
