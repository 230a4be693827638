package vllm_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/cmd/internal/vllm"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/measure/records"
)

// replay is a runner that hands the given records to the sink, in the given order.
type replay []*records.Record

func (r replay) RunTier(_ context.Context, _ sweep.Plan, sink sweep.Sink, _ <-chan struct{}) (records.Tier, error) {
	for _, rec := range r {
		if err := sink.Write(rec); err != nil {
			return records.Tier{}, err
		}
	}
	return records.Tier{}, nil
}

// collect is a sink that keeps what it is given.
type collect struct{ got []*records.Record }

func (c *collect) Write(r *records.Record) error { c.got = append(c.got, r); return nil }

const ms = time.Millisecond

// TestTapKeepsVLLMsArrays: the arrays of vLLM's result file, in the requests' order whatever
// order they finished in; a failed request has vLLM's zeros and its error; every record still
// reaches the sink.
func TestTapKeepsVLLMsArrays(t *testing.T) {
	ok := &records.Record{ID: 1, Outcome: records.OK, Planned: 0, Slot: 5 * ms, Sent: 6 * ms, First: 26 * ms, Last: 56 * ms,
		ITL: []time.Duration{10 * ms, 20 * ms}, InputTokens: 8, OutputTokens: 3}
	failed := &records.Record{ID: 0, Outcome: records.HTTPError, Planned: 0, Slot: 0, Sent: 1 * ms, First: records.Unset, Last: records.Unset,
		InputTokens: 4, Error: "HTTP 500"}
	timeout := &records.Record{ID: 2, Outcome: records.Timeout, Planned: 2 * ms, Slot: 4 * ms, Sent: records.Unset, First: records.Unset, Last: records.Unset}
	for _, detailed := range []bool{false, true} {
		sink := &collect{}
		tap := vllm.NewTap(replay{ok, timeout, failed}, detailed)
		if _, err := tap.RunTier(context.Background(), sweep.Plan{}, sink, nil); err != nil {
			t.Fatal(err)
		}
		if len(sink.got) != 3 {
			t.Errorf("the sink got %d records, want 3", len(sink.got))
		}
		got := tap.Arrays()
		want := &result.VLLMPerRequest{Latencies: []float64{0, 0.05, 0}, QueueTimes: []float64{0, 0.005, 0.002}}
		if detailed {
			want.InputLens = []int{4, 8, 0}
			want.OutputLens = []int{0, 3, 0}
			want.TTFTs = []float64{0, 0.02, 0}
			want.ITLs = [][]float64{{}, {0.01, 0.02}, {}}
			want.StartTimes = []float64{0.001, 0.006, 0}
			want.GeneratedTexts = []string{"", "", ""}
			want.Errors = []string{"HTTP 500", "", "timeout"}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("detailed %v:\ngot  %+v\nwant %+v", detailed, got, want)
		}
	}
}
