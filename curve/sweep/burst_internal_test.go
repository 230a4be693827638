package sweep

import (
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// The burst's timings, which calibrate the shadow queue, are the deployment's: counted from
// each request's written moment when its record has one, so the client's own time to connect
// and write (a burst dials every connection at once) is not taken for the deployment's first
// token; from sent otherwise (a virtual clock's records); requests that did not end ok, or lack
// a token, are left out.
func TestBurstTimingsCountFromWritten(t *testing.T) {
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	rec := func(outcome records.Outcome, sent, written, first, last time.Duration) records.Record {
		r := records.NewRecord(0, 0, 0)
		r.Outcome, r.Dispatched, r.Slot, r.Sent, r.Written, r.First, r.Last, r.End = outcome, sent, sent, sent, written, first, last, last
		return r
	}
	for _, tc := range []struct {
		name       string
		r          records.Record
		ttft, e2el time.Duration
		kept       bool
	}{
		{"written late by the client", rec(records.OK, ms(10), ms(37), ms(67), ms(357)), ms(30), ms(320), true},
		{"no written moment: from sent", rec(records.OK, ms(10), records.Unset, ms(67), ms(357)), ms(57), ms(347), true},
		{"a written moment before sent is not believed", rec(records.OK, ms(10), ms(5), ms(67), ms(357)), ms(57), ms(347), true},
		{"failed", rec(records.HTTPError, ms(10), ms(11), ms(67), ms(357)), 0, 0, false},
		{"no token", rec(records.OK, ms(10), ms(11), records.Unset, records.Unset), 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := newCollector(measure.Options{}, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Write(&tc.r); err != nil {
				t.Fatal(err)
			}
			if !tc.kept {
				if len(c.ttft) != 0 {
					t.Errorf("kept ttft %v, e2el %v; want nothing", c.ttft, c.e2el)
				}
				return
			}
			if len(c.ttft) != 1 || c.ttft[0] != tc.ttft || c.e2el[0] != tc.e2el {
				t.Errorf("kept ttft %v, e2el %v; want %v and %v", c.ttft, c.e2el, tc.ttft, tc.e2el)
			}
		})
	}
}
