package report_test

import (
	"bytes"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/curve/report"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/measure"
)

// TestRunTextWarnsOfNoOutput: a server that answers [DONE] with nothing before it makes every
// request ok with 0 tokens; the result must say so, not show a clean 100 % ok.
func TestRunTextWarnsOfNoOutput(t *testing.T) {
	for _, tt := range []struct {
		tokens int
		warn   bool
	}{{0, true}, {120, false}} {
		var b bytes.Buffer
		report.RunText(&b, result.RunFile{Summary: measure.Summary{Planned: 10, Issued: 10, Completed: 10, TotalOutputTokens: tt.tokens,
			Outcomes: map[string]int{"ok": 10}}})
		if got := strings.Contains(b.String(), "none of the 10 successful requests streamed an output token"); got != tt.warn {
			t.Errorf("%d tokens: warning %v, want %v:\n%s", tt.tokens, got, tt.warn, b.String())
		}
	}
}

// TestRunTextWarnsOfServerValues: a tier whose server sent usage counts beyond belief, stalled
// requests until the drain deadline, or cut replies short says so once, with the number of
// requests; a tier without them says nothing of it.
func TestRunTextWarnsOfServerValues(t *testing.T) {
	for _, tt := range []struct {
		name   string
		s      measure.Summary
		want   string
		absent bool
	}{
		{name: "usage not believed", s: measure.Summary{OutputTokensFromChunks: 3, OutputTokensBadUsage: 3},
			want: "WARNING: 3 requests had a usage message that cannot be believed (a count beyond both the max_tokens sent and what was streamed"},
		{name: "prompt usage not believed", s: measure.Summary{InputTokensBadUsage: 5},
			want: "WARNING: 5 requests had a usage.prompt_tokens beyond what the request could carry"},
		{name: "no prompt usage refused", s: measure.Summary{}, want: "usage.prompt_tokens", absent: true},
		{name: "stalls", s: measure.Summary{Stalls: 2}, want: "WARNING: 2 requests stalled: the server sent nothing on them"},
		{name: "cut short", s: measure.Summary{CutShort: 4}, want: `Note: 4 successful replies ended with finish_reason "length" below the max_tokens sent`},
		{name: "none of them", s: measure.Summary{}, want: "cannot be believed", absent: true},
		{name: "no stall", s: measure.Summary{}, want: "stalled", absent: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.s
			s.Planned, s.Issued, s.Completed, s.TotalOutputTokens, s.Outcomes = 10, 10, 10, 100, map[string]int{"ok": 10}
			var b bytes.Buffer
			report.RunText(&b, result.RunFile{Summary: s})
			if n := strings.Count(b.String(), tt.want); n != 1 && !tt.absent || n != 0 && tt.absent {
				t.Errorf("%q appears %d times:\n%s", tt.want, n, b.String())
			}
		})
	}
}

// TestRunTextPrintsNoNaNOrInf: every undefined value of a run's summary reads "—" (with why
// where it is not plain) and an unbounded rate "inf (all at once)"; Go's NaN and +Inf never
// reach the text. The summary is the worst case: rate inf, a window of no length, no output.
func TestRunTextPrintsNoNaNOrInf(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	undefined := measure.Stats{Count: 3, Mean: nan, Median: nan, Std: nan, Percentiles: map[string]float64{"p90": nan}}
	for _, tt := range []struct {
		name    string
		nominal float64
		wants   []string
	}{
		{"inf", inf, []string{"inf / inf (all at once)", "Realised rate in the window (sessions/s):    inf (all at once)",
			"(the window has no length: every arrival was planned at one instant", "(no output token was streamed)"}},
		{"ramp", nan, []string{"— / inf (all at once)", "(no one nominal rate: the arrival rate changes over the run, see Arrival)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := measure.Summary{Planned: 3, Issued: 3, Completed: 3, Outcomes: map[string]int{"ok": 3}, Duration: 0,
				RequestThroughput: nan, OutputThroughput: nan, TotalTokenThroughput: nan, RawOutputThroughput: nan,
				CompliantOutputThroughput: nan, CompliantTokenShare: nan, CompliantRequestShare: 1,
				NominalRate: tt.nominal, RealisedRate: inf, Percentiles: []float64{50, 90, 99},
				TTFT: undefined, TPOT: undefined, ITL: undefined, E2EL: undefined, ClientQueueTime: undefined,
				E2ELIncludingClientQueue: undefined, ScheduleLag: undefined,
				Sessions: &measure.Sessions{Sessions: 3, SessionRate: measure.Number(nan), MeanTurns: measure.Number(nan)},
				Steady: &measure.Steady{RealisedRate: inf, RequestThroughput: nan, RawOutputThroughput: nan,
					CompliantOutputThroughput: nan, CompliantShare: nan}}
			var b bytes.Buffer
			report.RunText(&b, result.RunFile{Summary: s, Verdict: &curve.PointVerdict{ShareLo: nan, ShareHi: nan, EffectiveRequests: nan}})
			out := b.String()
			if m := regexp.MustCompile(`\bNaN\b|[+-]Inf\b|\bInf\b`).FindString(out); m != "" {
				t.Errorf("the text holds %q:\n%s", m, out)
			}
			for _, w := range tt.wants {
				if !strings.Contains(out, w) {
					t.Errorf("the text lacks %q:\n%s", w, out)
				}
			}
		})
	}
}
