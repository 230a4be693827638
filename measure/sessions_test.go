package measure_test

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// turnRecord is an ok turn: sent at planned, first output after ttft, 5 tokens 10 ms apart.
func turnRecord(id, session, turn int, planned, ttft time.Duration, input, cached int) records.Record {
	r := records.NewRecord(0, id, planned)
	r.Session, r.Turn = session, turn
	r.Dispatched, r.Slot, r.Sent = planned, planned, planned
	r.FirstEvent, r.First = planned+ttft, planned+ttft
	r.ITL = []time.Duration{10 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond}
	r.Last, r.End = r.First+40*time.Millisecond, r.First+40*time.Millisecond
	r.Chunks, r.OutputTokens, r.OutputTokensSource = 5, 5, records.SourceUsage
	r.InputTokens, r.InputTokensSource = input, records.SourceUsage
	r.CachedTokens, r.CachedTokensSource = cached, records.SourceUsage
	return r
}

// TestSessionsByTurn: sessions are counted by their first turn, every metric is split by turn
// index, and the cached share of each turn is its cached over its prompt tokens.
func TestSessionsByTurn(t *testing.T) {
	var recs []records.Record
	const sessions = 4
	for s := 1; s <= sessions; s++ {
		start := time.Duration(s) * time.Second
		// Turn k: prompt 100·k tokens, of which the history (100·(k-1)) is cached; TTFT 10·k ms.
		for k := 1; k <= 3; k++ {
			planned := start + time.Duration(k-1)*500*time.Millisecond
			recs = append(recs, turnRecord(len(recs), s, k, planned, time.Duration(10*k)*time.Millisecond, 100*k, 100*(k-1)))
		}
	}
	recs[len(recs)-1].Outcome = records.Timeout // the last session did not complete
	for _, bounded := range []bool{false, true} {
		var sum measure.Summary
		if bounded {
			acc, err := measure.NewApproxAccumulator(measure.Options{}, 0)
			if err != nil {
				t.Fatal(err)
			}
			for i := range recs {
				acc.Add(&recs[i])
			}
			sum = acc.Summary(records.Tier{Planned: len(recs)})
		} else {
			sum = measure.Summarize(recs, records.Tier{Planned: len(recs)}, measure.Options{})
		}
		ss := sum.Sessions
		if ss == nil || ss.Sessions != sessions || ss.Completed != sessions-1 || float64(ss.MeanTurns) != 3 || len(ss.ByTurn) != 3 {
			t.Fatalf("bounded %v: sessions %+v", bounded, ss)
		}
		if math.Abs(float64(ss.SessionRate)-sessions/sum.Duration) > 1e-9 {
			t.Errorf("session rate %v, want %v", ss.SessionRate, sessions/sum.Duration)
		}
		// A completed session lasts from its first turn's arrival to its last turn's end: 2 × 500 ms + 30 + 40 ms.
		if d := float64(ss.Duration.Median); math.Abs(d-1.07) > 1.07*0.01 {
			t.Errorf("bounded %v: session duration median %v s, want 1.07", bounded, d)
		}
		for k, ts := range ss.ByTurn {
			turn := k + 1
			wantOK := sessions
			if turn == 3 {
				wantOK = sessions - 1
			}
			wantShare := float64(turn-1) / float64(turn)
			if ts.Turn != turn || ts.Requests != sessions || ts.Ok != wantOK || float64(ts.MeanInputTokens) != float64(100*turn) ||
				math.Abs(float64(ts.CachedPromptShare)-wantShare) > 1e-12 {
				t.Errorf("bounded %v: turn %d: %+v, want %d ok, cached share %v", bounded, turn, ts, wantOK, wantShare)
			}
			if m := float64(ts.TTFT.Median); math.Abs(m-float64(10*turn)) > float64(10*turn)*0.01 {
				t.Errorf("bounded %v: turn %d TTFT median %v ms, want %d", bounded, turn, m, 10*turn)
			}
		}
		if got, want := sum.CachedPromptShare, float64(4*(0+100+200)-200)/float64(4*(100+200+300)-300); math.Abs(got-want) > 1e-12 {
			t.Errorf("cached prompt share %v, want %v", got, want)
		}
		b, err := json.Marshal(sum)
		if err != nil {
			t.Fatal(err)
		}
		var back measure.Summary
		if err := json.Unmarshal(b, &back); err != nil || back.Sessions == nil || len(back.Sessions.ByTurn) != 3 || back.Sessions.Completed != sessions-1 {
			t.Errorf("round trip: %v %+v", err, back.Sessions)
		}
	}
}

// TestReasoningSummary: TTFA and the answer's ITL leave out the reasoning; responses without
// reasoning count the same for both; ttfa and answer_itl objectives judge the answer.
func TestReasoningSummary(t *testing.T) {
	const ms = time.Millisecond
	plain := turnRecord(0, 0, 0, 0, 50*ms, 10, 0)
	plain.Session, plain.Turn, plain.CachedTokensSource = 0, 0, ""
	reasoned := plain
	reasoned.ID = 1
	// Three reasoning chunks (50, 60, 70 ms), then answers at 300 and 320 ms.
	reasoned.ITL = []time.Duration{10 * ms, 10 * ms, 230 * ms, 20 * ms}
	reasoned.First, reasoned.FirstAnswer, reasoned.Last, reasoned.End = 50*ms, 300*ms, 320*ms, 320*ms
	reasoned.ReasoningChunks, reasoned.AnswerITL = 3, []time.Duration{20 * ms}
	reasoned.ReasoningTokens, reasoned.ReasoningTokensSource = 3, records.SourceUsage
	obj, err := measure.ParseGoodput([]string{"ttfa:100"})
	if err != nil {
		t.Fatal(err)
	}
	s := measure.Summarize([]records.Record{plain, reasoned}, records.Tier{Planned: 2}, measure.Options{Objectives: obj})
	if s.TTFT.Count != 2 || s.TTFT.Median != 50 || s.TTFA.Median != 175 || s.TTFA.Percentiles["p99"] != 50+0.99*250 {
		t.Errorf("TTFT %+v TTFA %+v", s.TTFT, s.TTFA)
	}
	if s.ITL.Count != 8 || s.AnswerITL.Count != 5 || s.AnswerITL.Mean != 12 {
		t.Errorf("ITL %+v, answer ITL %+v", s.ITL, s.AnswerITL)
	}
	if s.ReasoningResponses != 1 || s.ReasoningTokens != 3 || s.AnswerTokens != 7 || s.GoodRequests != 1 {
		t.Errorf("reasoning responses %d tokens %d answer tokens %d good %d", s.ReasoningResponses, s.ReasoningTokens, s.AnswerTokens, s.GoodRequests)
	}
	// In bounded memory, the same figures within the sketch's relative error.
	acc, err := measure.NewApproxAccumulator(measure.Options{Objectives: obj}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []records.Record{plain, reasoned} {
		acc.Add(&r)
	}
	b := acc.Summary(records.Tier{Planned: 2})
	near := func(x, y float64) bool { return math.Abs(x-y) <= measure.DefaultSketchError*math.Abs(y)+1e-9 }
	if b.TTFT.Count != 2 || b.TTFA.Count != 2 || !near(b.TTFA.Percentiles["p99"], s.TTFA.Percentiles["p99"]) || !near(b.TTFT.Median, s.TTFT.Median) ||
		b.ITL.Count != 8 || b.AnswerITL.Count != 5 || !near(b.AnswerITL.Mean, 12) {
		t.Errorf("bounded: TTFT %+v TTFA %+v ITL %+v answer ITL %+v", b.TTFT, b.TTFA, b.ITL, b.AnswerITL)
	}
	if !s.Reports("ttfa") || !s.Reports("answer_itl") {
		t.Error("a tier with reasoning must report ttfa and answer_itl")
	}
	if p := measure.Summarize([]records.Record{plain}, records.Tier{Planned: 1}, measure.Options{}); p.Reports("ttfa") {
		t.Error("a tier without reasoning reports ttfa, which is ttft there")
	}
	obj, _ = measure.ParseGoodput([]string{"answer_itl:25"}) // reasoned: one answer gap of 20 ms; its ITL has 230 ms
	if !obj.Met(&reasoned) || obj.Met(&records.Record{Outcome: records.OK, ITL: []time.Duration{26 * ms}, First: 0, Sent: 0}) {
		t.Error("answer_itl judges the mean gap between answer chunks")
	}
}
