package loadgen

import (
	"context"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/internal/racedetector"
	"github.com/loadcurve/loadcurve/loadgen/internal/fakesse"
	"github.com/loadcurve/loadcurve/measure/records"
	"github.com/loadcurve/loadcurve/workloads"
)

// TestRequestIDCostsOneAllocation: a request that carries an id costs one allocation more than
// one that does not (the id's string); its header comes from a pool.
func TestRequestIDCostsOneAllocation(t *testing.T) {
	sc := fakesse.Stream{Chunks: 4, Usage: true}.Script()
	allocs := func(prefix string) float64 {
		c, err := NewClient(Target{BaseURL: "http://alloc.invalid/v1", Model: "m", RequestIDPrefix: prefix}, 1)
		if err != nil {
			t.Fatal(err)
		}
		var got string
		c.hc.Transport = &fakesse.Transport{Handler: func(r fakesse.Received) fakesse.Script {
			got = r.Header.Get(RequestIDHeader)
			return sc
		}}
		req := workloads.Request{Prompt: "p", InputTokens: 1, MaxTokens: 4}
		ctx, t0 := context.Background(), time.Now()
		n := testing.AllocsPerRun(200, func() {
			rec := records.NewRecord(2, 41, 0)
			c.Do(ctx, t0, &req, &rec)
			if rec.Outcome != records.OK {
				t.Fatalf("%v %s", rec.Outcome, rec.Error)
			}
		})
		if want := RequestID(prefix, 2, 41); prefix != "" && got != want {
			t.Errorf("id %q, want %q", got, want)
		}
		return n
	}
	without, with := allocs(""), allocs("bench-0123abcd-")
	t.Logf("allocations per request: %.1f with an id, %.1f without", with, without)
	if racedetector.Enabled {
		t.Skip("the race detector makes sync.Pool drop values: the count is meaningless")
	}
	if with-without > 1 {
		t.Errorf("a request with an id costs %.1f allocations more than one without (%.1f vs %.1f), want at most 1", with-without, with, without)
	}
}
