package main

import (
	"regexp"
	"strings"
	"testing"
)

// nanOrInf matches what Go prints for an undefined or unbounded float: NaN, +Inf, -Inf (and
// "Inf" alone), never meant for a person.
var nanOrInf = regexp.MustCompile(`\bNaN\b|[+-]Inf\b|\bInf\b`)

// noNaNOrInf fails when text, meant for a person, holds a NaN or an Inf; allowed lists lines
// (substrings) printed by code outside this change that still do (named in the report).
func noNaNOrInf(t *testing.T, name, text string, allowed ...string) {
	t.Helper()
lines:
	for _, l := range strings.Split(text, "\n") {
		if !nanOrInf.MatchString(l) {
			continue
		}
		for _, a := range allowed {
			if strings.Contains(l, a) {
				continue lines
			}
		}
		t.Errorf("%s prints NaN or Inf: %q", name, l)
	}
}

// TestRegressionRunTextHasNoNaNOrInf: a run at rate inf and a ramp run print no NaN or Inf, in
// `run` and in `report` of the run; an unbounded rate reads "inf (all at once)" and an
// undefined one "—" with why. Before, the inf run printed "inf / +Inf", "+Inf" and "NaN / NaN"
// in its steady state, and the ramp "— / 4.21" with no word on why. The JSON keeps vLLM's
// conventions ("inf", null).
func TestRegressionRunTextHasNoNaNOrInf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		args  []string
		wants []string // regular expressions
	}{
		{"inf", []string{"--request-rate", "inf", "--num-requests", "50"}, []string{
			`Nominal / realised offered rate \(req/s\): +inf / inf \(all at once\)\n`,
			`Realised rate in the window \(req/s\): +inf \(all at once\)\n`,
			`Completions in the window \(req/s\): +—\n`,
			`Raw / compliant output \(tok/s\): +— / —\n  \(the window has no length: every arrival was planned at one instant, so no rate is defined over it`,
		}},
		{"ramp", []string{"--ramp-up-strategy", "linear", "--ramp-up-start-rps", "50", "--ramp-up-end-rps", "200", "--num-requests", "100"}, []string{
			`Nominal / realised offered rate \(req/s\): +— / [0-9]+\.[0-9]{2}\n  \(no one nominal rate: the arrival rate changes over the run, see Arrival\)`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			stdout, stderr := mustRun(t, append(append([]string{"run", "--out", dir}, tt.args...), small...)...)
			noNaNOrInf(t, "run's stdout", stdout)
			noNaNOrInf(t, "run's stderr", stderr)
			for _, w := range tt.wants {
				if !regexp.MustCompile(w).MatchString(stdout) {
					t.Errorf("run's summary lacks %q:\n%s", w, stdout)
				}
			}
			rep, repErr := mustRun(t, "report", dir, "-v")
			noNaNOrInf(t, "report's stdout", rep)
			noNaNOrInf(t, "report's stderr", repErr)
			if !regexp.MustCompile(tt.wants[0]).MatchString(rep) {
				t.Errorf("report's summary lacks %q:\n%s", tt.wants[0], rep)
			}
			js, _ := mustRun(t, "report", dir, "--format", "json")
			var sum map[string]any
			decodeJSON(t, "report --format json", js, &sum)
			if tt.name == "inf" {
				st, _ := sum["steady_state"].(map[string]any)
				if sum["request_rate"] != "inf" || sum["realised_request_rate"] != "inf" || st == nil || st["request_throughput"] != nil {
					t.Errorf("JSON changed: request_rate %v, realised_request_rate %v, steady_state %v", sum["request_rate"], sum["realised_request_rate"], st)
				}
			}
		})
	}
}

// TestRegressionScheduleSaysInfInWords: `schedule --request-rate inf` printed "realised rate
// +Inf/s" on stderr.
func TestRegressionScheduleSaysInfInWords(t *testing.T) {
	t.Parallel()
	_, stderr := mustRun(t, "schedule", "--request-rate", "inf", "--num-requests", "3")
	noNaNOrInf(t, "schedule's stderr", stderr)
	if !strings.Contains(stderr, "3 arrivals, realised rate inf (all at once)") {
		t.Errorf("stderr %q", stderr)
	}
}
