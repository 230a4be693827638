package virtual

import (
	"context"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/measure/records"
)

// TestTheDrainDeadlineCancels: a request still running at a tier's drain deadline (its Grace
// after the arrival phase) is canceled there, with the tokens it had streamed, as loadgen
// cancels it; without a Grace every request runs to its end. An overloaded tier: 4 slots of
// 400 ms (10 req/s) offered 20 req/s for 10 s builds a queue that takes about 10 s more to drain.
func TestTheDrainDeadlineCancels(t *testing.T) {
	offsets := poissonOffsets(200, 20, 3)
	end := offsets[len(offsets)-1]
	tests := []struct {
		name     string
		grace    time.Duration
		canceled bool // some requests must be canceled
	}{
		{"no grace: everything ends", 0, false},
		{"a long grace: everything ends", time.Minute, false},
		{"a one-second grace cancels the queue", time.Second, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got collect
			_, err := (&QueueRunner{Config: clusterQueue}).RunTier(context.Background(),
				sweep.Plan{Offsets: offsets, ArrivalsEnd: end, Grace: tt.grace}, &got, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(offsets) {
				t.Fatalf("%d records of %d requests", len(got), len(offsets))
			}
			canceled, partial := 0, 0
			for _, r := range got {
				if tt.grace > 0 && r.End > end+tt.grace {
					t.Fatalf("request %d ends at %v, past the deadline %v", r.ID, r.End, end+tt.grace)
				}
				if r.Outcome != records.Canceled {
					continue
				}
				canceled++
				if r.End != end+tt.grace || r.Error == "" {
					t.Errorf("request %d canceled at %v (%q), want at the deadline %v", r.ID, r.End, r.Error, end+tt.grace)
				}
				if r.OutputTokens > 0 {
					partial++
					if r.First > r.End || r.Last > r.End || len(r.ITL) != r.OutputTokens-1 || r.OutputTokensSource != records.SourceChunks {
						t.Errorf("request %d: first %v, last %v, %d gaps for %d tokens from %s", r.ID, r.First, r.Last, len(r.ITL), r.OutputTokens, r.OutputTokensSource)
					}
				} else if r.First != records.Unset {
					t.Errorf("request %d: no token, yet a first token at %v", r.ID, r.First)
				}
			}
			if tt.canceled != (canceled > 0) {
				t.Errorf("%d requests canceled", canceled)
			}
			if tt.canceled && canceled < 5 {
				t.Errorf("only %d requests canceled from a queue that takes seconds to drain", canceled)
			}
		})
	}
}
