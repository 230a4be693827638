package plan_test

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/curve/plan"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/loadgen/sim"
	"github.com/loadcurve/loadcurve/loadgen/virtual"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// keepRecords runs tiers on a virtual runner and keeps every record, as a records file would.
type keepRecords struct {
	sweep.Runner
	mu   sync.Mutex
	recs []records.Record
}

type keepSink struct {
	sweep.Sink
	k *keepRecords
}

func (s keepSink) Write(r *records.Record) error {
	s.k.mu.Lock()
	s.k.recs = append(s.k.recs, *r)
	s.k.mu.Unlock()
	return s.Sink.Write(r)
}

func (k *keepRecords) RunTier(ctx context.Context, p sweep.Plan, sink sweep.Sink, stop <-chan struct{}) (records.Tier, error) {
	return k.Runner.RunTier(ctx, p, keepSink{Sink: sink, k: k}, stop)
}

// virtualSweep sweeps a virtual M/D/c queue whose every response is exactly 128 tokens, with a
// confirmation, and returns the result and its records as a file.
func virtualSweep(t *testing.T, objective time.Duration) (*result.Result, *records.File) {
	t.Helper()
	q := sim.QueueConfig{ModelName: "m", Servers: 4, Service: 400 * time.Millisecond, FirstToken: 20 * time.Millisecond, OutputTokens: 128}
	k := &keepRecords{Runner: &virtual.QueueRunner{Config: q}}
	s := result.Settings{Measure: measure.Options{Objectives: measure.Objectives{TTFT: objective}}, Params: curve.DefaultParams()}
	res, err := (&sweep.Executor{Config: sweep.Config{Rates: sweep.Rates{List: []float64{2, 4, 6, 8}}, Seed: 1, Confirm: true, Settings: s}, Runner: k}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	f := &records.File{Header: res.Header, Records: k.recs}
	for _, tr := range res.Tiers {
		f.Tiers = append(f.Tiers, tr.Tier)
	}
	return res, f
}

// TestTokensPerRequestAreCounted: every response of the queue is 128 tokens, and the plan's
// tokens per request are exactly 128, counted in the confirmation's steady-state window, over
// the same requests the steady state judged. A ratio of throughputs to the realised rate
// (FromAnalysis, what plan used) is not 128.
func TestTokensPerRequestAreCounted(t *testing.T) {
	res, f := virtualSweep(t, 500*time.Millisecond)
	op := res.Analysis.OperatingPoint
	if op == nil || op.Confirmation == nil || !op.Confirmation.AtThisPoint {
		t.Fatalf("no confirmation at the operating point: %+v", res.Analysis.Notes)
	}
	d, _, err := plan.FromResult("A", res, f)
	if err != nil {
		t.Fatal(err)
	}
	c := d.Tokens
	if c == nil || c.Requests == 0 {
		t.Fatalf("nothing counted: %+v", d)
	}
	if got := c.TokensPerCompliantRequest(); got != 128 {
		t.Errorf("tokens per compliant request %v, want exactly 128", got)
	}
	if d.RawTokensPerRequest != 128 {
		t.Errorf("raw tokens per request %v, want exactly 128", d.RawTokensPerRequest)
	}
	if want := 128 * c.CompliantShare(); math.Abs(d.CompliantTokensPerRequest-want) > 1e-12*want {
		t.Errorf("compliant tokens per request %v, want 128 × share %v", d.CompliantTokensPerRequest, c.CompliantShare())
	}
	var st *measure.Steady
	for _, tr := range res.Tiers {
		if tr.Tier.Tier == op.Confirmation.Tier {
			st = tr.Summary.Steady
		}
	}
	if st == nil || c.Requests != st.Requests || c.Compliant != st.Compliant || len(c.Tiers) != 1 || c.Tiers[0] != op.Confirmation.Tier {
		t.Errorf("counted %d requests (%d compliant) in tiers %v; the confirmation's steady state judged %+v", c.Requests, c.Compliant, c.Tiers, st)
	}
	if !strings.Contains(d.Source, "counted in the confirmation's steady-state window") {
		t.Errorf("source %q", d.Source)
	}
	est, _, err := plan.FromAnalysis("A", res.Analysis)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("counted: %d of %d compliant, %v tokens each; the ratio of rates gave %v raw and %v compliant",
		c.Compliant, c.Requests, c.TokensPerCompliantRequest(), est.RawTokensPerRequest, est.CompliantTokensPerRequest)
	d.CostPerHour = 4
	r, err := plan.Plan(d, plan.PeakForecast(10), plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Join(r.Notes, "\n"); !strings.Contains(n, "tokens per request are counted in the records (tier ") {
		t.Errorf("notes do not say the tokens were counted:\n%s", n)
	}
}

// TestCountTokens: issued requests planned inside the window count, compliant ones by the
// objectives; the others do not.
func TestCountTokens(t *testing.T) {
	s := time.Second
	rec := func(planned time.Duration, tokens int, ttft time.Duration, outcome records.Outcome) records.Record {
		r := records.NewRecord(1, int(planned/time.Millisecond), planned)
		r.Dispatched, r.Sent, r.Outcome, r.OutputTokens = planned, planned, outcome, tokens
		r.First, r.Last, r.End = planned+ttft, planned+ttft+s, planned+ttft+s
		return r
	}
	notIssued := rec(5*s, 128, 0, records.Canceled)
	notIssued.Dispatched = records.Unset
	recs := []records.Record{
		rec(1*s, 100, 10*time.Millisecond, records.OK),     // before the window
		rec(2*s, 128, 10*time.Millisecond, records.OK),     // at its start: counts, complies
		rec(3*s, 128, 900*time.Millisecond, records.OK),    // misses the 500 ms TTFT
		rec(4*s, 40, 10*time.Millisecond, records.Timeout), // failed after 40 tokens
		notIssued,
		rec(6*s, 128, 10*time.Millisecond, records.OK), // at its end: counts
		rec(7*s, 999, 10*time.Millisecond, records.OK), // after it
	}
	var c plan.TokenCount
	c.Add(1, recs, 2*s, 6*s, measure.Objectives{TTFT: 500 * time.Millisecond})
	if c.Requests != 4 || c.Compliant != 2 || c.OutputTokens != 128*3+40 || c.CompliantOutputTokens != 256 {
		t.Errorf("%+v", c)
	}
	if c.TokensPerCompliantRequest() != 128 || c.CompliantShare() != 0.5 {
		t.Errorf("%v tokens per compliant request, share %v", c.TokensPerCompliantRequest(), c.CompliantShare())
	}
}
