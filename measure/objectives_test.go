package measure_test

import (
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

func TestParseGoodput(t *testing.T) {
	ms := time.Millisecond
	good := []struct {
		name  string
		args  []string
		want  measure.Objectives
		canon string
	}{
		{"none", nil, measure.Objectives{}, ""},
		{"one", []string{"ttft:500"}, measure.Objectives{TTFT: 500 * ms}, "ttft:500"},
		{"vLLM style, one per arg", []string{"ttft:500", "tpot:50", "e2el:20000"},
			measure.Objectives{TTFT: 500 * ms, TPOT: 50 * ms, E2EL: 20000 * ms}, "ttft:500 tpot:50 e2el:20000"},
		{"several in one arg", []string{"e2el:20000, ttft:500 tpot:50"},
			measure.Objectives{TTFT: 500 * ms, TPOT: 50 * ms, E2EL: 20000 * ms}, "ttft:500 tpot:50 e2el:20000"},
		{"ours", []string{"client_queue_time:1.5,e2el_including_client_queue:3000"},
			measure.Objectives{ClientQueueTime: 1500 * time.Microsecond, E2ELIncludingClientQueue: 3000 * ms},
			"client_queue_time:1.5 e2el_including_client_queue:3000"},
		{"fraction kept to the ns", []string{"tpot:12.3456789"}, measure.Objectives{TPOT: 12345679}, "tpot:12.345679"},
		{"one nanosecond", []string{"ttft:0.000001"}, measure.Objectives{TTFT: 1}, "ttft:0.000001"},
		{"exponent", []string{"e2el:2e4"}, measure.Objectives{E2EL: 20 * time.Second}, "e2el:20000"},
	}
	for _, tc := range good {
		t.Run(tc.name, func(t *testing.T) {
			got, err := measure.ParseGoodput(tc.args)
			if err != nil {
				t.Fatalf("ParseGoodput(%q): %v", tc.args, err)
			}
			if got != tc.want {
				t.Errorf("ParseGoodput(%q) = %+v, want %+v", tc.args, got, tc.want)
			}
			if s := got.String(); s != tc.canon {
				t.Errorf("String() = %q, want %q", s, tc.canon)
			}
			if got.IsZero() != (tc.canon == "") {
				t.Errorf("IsZero() = %v", got.IsZero())
			}
			// The canonical form parses back to the same objectives.
			var args []string
			if tc.canon != "" {
				args = []string{tc.canon}
			}
			if back, err := measure.ParseGoodput(args); err != nil || back != got {
				t.Errorf("ParseGoodput(String()) = %+v, %v; want %+v", back, err, got)
			}
		})
	}

	bad := []struct {
		name  string
		args  []string
		token string // the bad token the message must quote
		why   string
	}{
		{"empty arg", []string{""}, `""`, "no KEY:MS pair"},
		{"only separators", []string{" , "}, `" , "`, "no KEY:MS pair"},
		{"no colon", []string{"ttft"}, `"ttft"`, "want KEY:MS"},
		{"no value", []string{"ttft:"}, `"ttft:"`, "missing value"},
		{"no key", []string{":500"}, `":500"`, "missing key"},
		{"two colons", []string{"ttft:5:00"}, `"ttft:5:00"`, "more than one ':'"},
		{"unknown key", []string{"latency:5"}, `"latency:5"`, `unknown key "latency"`},
		{"keys are lower case", []string{"TTFT:500"}, `"TTFT:500"`, "unknown key"},
		{"not a number", []string{"ttft:fast"}, `"ttft:fast"`, "not a number"},
		{"unit suffix", []string{"ttft:500ms"}, `"ttft:500ms"`, "not a number"},
		{"zero", []string{"ttft:0"}, `"ttft:0"`, "greater than 0"},
		{"negative", []string{"tpot:-5"}, `"tpot:-5"`, "greater than 0"},
		{"NaN", []string{"tpot:NaN"}, `"tpot:NaN"`, "finite"},
		{"Inf", []string{"tpot:inf"}, `"tpot:inf"`, "finite"},
		{"too large", []string{"e2el:1e300"}, `"e2el:1e300"`, "too large"},
		{"below 1 ns", []string{"e2el:1e-7"}, `"e2el:1e-7"`, "resolution"},
		{"duplicate across args", []string{"ttft:500", "ttft:600"}, `"ttft:600"`, "given twice"},
		{"duplicate in one arg", []string{"ttft:500,tpot:5 ttft:1"}, `"ttft:1"`, "given twice"},
		{"bad after good", []string{"ttft:500", "tpot:x"}, `"tpot:x"`, "not a number"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := measure.ParseGoodput(tc.args)
			if err == nil {
				t.Fatalf("ParseGoodput(%q): no error", tc.args)
			}
			if fe := field.Of(err); fe == nil || fe.Name != measure.FieldObjectives {
				t.Errorf("error %q is not a field error naming the objectives", err)
			}
			msg := err.Error()
			for _, want := range []string{tc.token, tc.why, strings.Join(measure.ObjectiveKeys(), ", ")} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not mention %q", msg, want)
				}
			}
		})
	}
}

// okRecord builds an ok record from millisecond offsets: planned, dispatched, slot, sent,
// first, last (ms < 0 means the moment never came).
func okRecord(planned, dispatched, slot, sent, first, last float64, outTokens int) records.Record {
	r := records.NewRecord(0, 0, at(planned))
	r.Dispatched, r.Slot, r.Sent, r.First, r.Last = at(dispatched), at(slot), at(sent), at(first), at(last)
	r.FirstEvent, r.End = r.First, r.Last
	r.OutputTokens = outTokens
	return r
}

func at(ms float64) time.Duration {
	if ms < 0 {
		return records.Unset
	}
	return time.Duration(ms * float64(time.Millisecond))
}

func TestObjectivesMet(t *testing.T) {
	// A request with TTFT 100 ms, E2EL 300 ms, 11 tokens → TPOT (300−100)/10 = 20 ms,
	// client_queue_time 5 ms, e2el_including_client_queue 310 ms.
	base := okRecord(0, 2, 5, 10, 110, 310, 11)
	ms := time.Millisecond
	tests := []struct {
		name string
		obj  measure.Objectives
		rec  records.Record
		want bool
	}{
		{"no objectives", measure.Objectives{}, base, true},
		{"TTFT equal to objective meets it", measure.Objectives{TTFT: 100 * ms}, base, true},
		{"TTFT 1 ns over", measure.Objectives{TTFT: 100*ms - 1}, base, false},
		{"TPOT equal", measure.Objectives{TPOT: 20 * ms}, base, true},
		{"TPOT over", measure.Objectives{TPOT: 19 * ms}, base, false},
		{"E2EL equal", measure.Objectives{E2EL: 300 * ms}, base, true},
		{"E2EL over", measure.Objectives{E2EL: 299 * ms}, base, false},
		{"client queue equal", measure.Objectives{ClientQueueTime: 5 * ms}, base, true},
		{"client queue over", measure.Objectives{ClientQueueTime: 4 * ms}, base, false},
		{"e2el incl queue equal", measure.Objectives{E2ELIncludingClientQueue: 310 * ms}, base, true},
		{"e2el incl queue over", measure.Objectives{E2ELIncludingClientQueue: 309 * ms}, base, false},
		{"all met", measure.Objectives{TTFT: 100 * ms, TPOT: 20 * ms, E2EL: 300 * ms, ClientQueueTime: 5 * ms, E2ELIncludingClientQueue: 310 * ms}, base, true},
		{"one of several missed", measure.Objectives{TTFT: time.Second, TPOT: time.Second, E2EL: 299 * ms}, base, false},
		// One output token: TPOT undefined, meets any TPOT objective (vLLM counts it as 0).
		{"TPOT undefined meets", measure.Objectives{TPOT: time.Nanosecond}, okRecord(0, 0, 0, 0, 500, 500, 1), true},
		{"TPOT zero tokens meets", measure.Objectives{TPOT: time.Nanosecond}, okRecord(0, 0, 0, 0, 500, 500, 0), true},
		// No output at all: TTFT undefined, which cannot meet a TTFT objective.
		{"TTFT undefined misses", measure.Objectives{TTFT: time.Hour}, okRecord(0, 0, 0, 0, -1, -1, 0), false},
		{"E2EL undefined misses", measure.Objectives{E2EL: time.Hour}, okRecord(0, 0, 0, 0, -1, -1, 0), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.obj.Met(&tc.rec); got != tc.want {
				t.Errorf("Met = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestCutShortMissesTPOT: a reply whose TPOT is undefined (one token or none) meets a TPOT
// objective, as in vLLM's goodput, unless the server cut it short: finish_reason "length" with
// fewer tokens than the max_tokens sent. Such one-token replies were judged compliant under
// ttft+tpot objectives (issue 23); a server that stopped every reply after its first token met
// any TPOT objective.
func TestCutShortMissesTPOT(t *testing.T) {
	ms := time.Millisecond
	reply := func(tokens, maxTokens int, finish string) records.Record {
		r := okRecord(0, 0, 0, 0, 50, 50+10*float64(max(tokens-1, 0)), tokens)
		if tokens == 0 {
			r.First, r.Last, r.FirstEvent, r.End = records.Unset, records.Unset, at(50), at(50)
		}
		r.MaxTokens, r.FinishReason = maxTokens, finish
		return r
	}
	tpot := measure.Objectives{TTFT: 100 * ms, TPOT: 20 * ms}
	tests := []struct {
		name     string
		obj      measure.Objectives
		rec      records.Record
		cutShort bool
		met      bool
	}{
		{"one token, length, 128 asked: cut short, misses TPOT", tpot, reply(1, 128, "length"), true, false},
		{"no token, length, 128 asked: cut short, misses TPOT", measure.Objectives{TPOT: 20 * ms}, reply(0, 128, "length"), true, false},
		{"one token, stop: an answer, meets TPOT (vLLM)", tpot, reply(1, 128, "stop"), false, true},
		{"one token, no finish_reason: meets TPOT (vLLM)", tpot, reply(1, 128, ""), false, true},
		{"one token, length, one asked: what was asked, meets", tpot, reply(1, 1, "length"), false, true},
		{"one token, length, no max_tokens known: meets", tpot, reply(1, 0, "length"), false, true},
		{"one token cut short, no TPOT objective: meets", measure.Objectives{TTFT: 100 * ms}, reply(1, 128, "length"), true, true},
		{"11 tokens cut short: TPOT defined, judged on it", tpot, reply(11, 128, "length"), true, true},
		{"128 of 128, length: not cut short", tpot, reply(128, 128, "length"), false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := measure.CutShort(&tc.rec); got != tc.cutShort {
				t.Errorf("CutShort = %v, want %v", got, tc.cutShort)
			}
			if got := tc.obj.Met(&tc.rec); got != tc.met {
				t.Errorf("Met = %v, want %v", got, tc.met)
			}
			if got := tc.obj.Compliant(&tc.rec); got != tc.met {
				t.Errorf("Compliant = %v, want %v", got, tc.met)
			}
			// Slack, the continuous series compliance is a threshold of, agrees.
			if slack := tc.obj.Slack(&tc.rec); (slack <= 1) != tc.met {
				t.Errorf("Slack = %v, Met = %v", slack, tc.met)
			}
		})
	}
}
