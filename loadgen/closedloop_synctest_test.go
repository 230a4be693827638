package loadgen

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loadcurve/loadcurve/loadgen/internal/fakesse"
	"github.com/loadcurve/loadcurve/measure/records"
)

// TestClosedLoopExact: each user sends its next request exactly when its previous response
// ended plus the think time, drawing from the pool in order; nothing waits in the client, and
// what no user sent (the pool's rest, or after the stop time) is not part of the tier.
func TestClosedLoopExact(t *testing.T) {
	for _, tc := range []struct {
		name        string
		stopAfter   time.Duration
		want        int           // records
		arrivalsEnd time.Duration // the last request sent, or the stop time that stopped the users
	}{
		{"until the pool is empty", 0, 6, 300 * ms},
		{"until the stop time", 200 * ms, 4, 200 * ms},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := memClient(t, Target{}, 0, func(fakesse.Received) fakesse.Script {
					return fakesse.Stream{TTFT: 60 * ms, Gap: 20 * ms, Chunks: 3}.Script()
				})
				sink := &sliceSink{}
				res, err := Run(context.Background(), c, Tier{Offsets: []time.Duration{0, 0}, Requests: reqs(6), Users: 2, Think: 50 * ms,
					StopAfter: tc.stopAfter}, sink, nil)
				if err != nil {
					t.Fatal(err)
				}
				if res.Planned != tc.want || res.ArrivalsEnd != tc.arrivalsEnd {
					t.Errorf("planned %d, arrivals end %v; want %d, %v", res.Planned, res.ArrivalsEnd, tc.want, tc.arrivalsEnd)
				}
				for _, r := range sink.byID(t, tc.want) {
					// Requests 2k and 2k+1 are the k-th of the two users: 100 ms each, 50 ms apart.
					planned := time.Duration(r.ID/2) * 150 * ms
					if r.Outcome != records.OK || r.Planned != planned || r.Dispatched != planned || r.Slot != planned ||
						r.Sent != planned || r.End != planned+100*ms {
						t.Errorf("request %d: %v planned %v dispatched %v slot %v sent %v end %v; want planned %v",
							r.ID, r.Outcome, r.Planned, r.Dispatched, r.Slot, r.Sent, r.End, planned)
					}
					if q, _ := r.ClientQueueTime(); q != 0 {
						t.Errorf("request %d waited %v in the client", r.ID, q)
					}
				}
			})
		})
	}
}

// TestClosedLoopStop: once Stop closes, users send nothing more, and Result says the tier
// stopped early with what it sent.
func TestClosedLoopStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := memClient(t, Target{}, 0, func(fakesse.Received) fakesse.Script {
			return fakesse.Stream{TTFT: 100 * ms, Chunks: 1}.Script()
		})
		stop := make(chan struct{})
		time.AfterFunc(250*ms, func() { close(stop) })
		sink := &sliceSink{}
		res, err := Run(context.Background(), c, Tier{Offsets: make([]time.Duration, 3), Requests: reqs(100), Users: 3, Stop: stop}, sink, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Three users, 100 ms a request, no think time: 3 at 0, 3 at 100, 3 at 200 ms; the stop
		// at 250 ms comes before the fourth round.
		if !res.StoppedEarly || res.Planned != 9 || len(sink.recs) != 9 {
			t.Errorf("stopped early %v, planned %d, %d records", res.StoppedEarly, res.Planned, len(sink.recs))
		}
	})
}

func TestClosedLoopValidate(t *testing.T) {
	for _, tier := range []Tier{
		{Offsets: []time.Duration{0}, Requests: reqs(3), Users: 2},
		{Offsets: []time.Duration{0, 0}, Requests: reqs(3), Users: 2, MaxConcurrency: 2},
		{Offsets: []time.Duration{0}, Requests: sessionSet(1, 2, 0), Users: 1},
		{Offsets: []time.Duration{0}, Requests: reqs(1), Users: 1, Think: -1},
	} {
		if errs := tier.Validate(); len(errs) == 0 {
			t.Errorf("%+v: valid", tier)
		}
	}
}
