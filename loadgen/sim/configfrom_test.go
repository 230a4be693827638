package sim_test

import (
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/loadgen/sim"
)

func TestConfigFrom(t *testing.T) {
	type problem struct{ name, msg string } // name "" for a plain error
	for _, tc := range []struct {
		what    string
		profile string
		set     map[string]string
		check   func(sim.Config) bool
		want    []problem
	}{
		{what: "the profile alone", profile: sim.ProfileLatency,
			check: func(c sim.Config) bool { l, _ := sim.Profile(sim.ProfileLatency); return c == l }},
		{what: "empty is the default profile", profile: "",
			check: func(c sim.Config) bool { d, _ := sim.Profile(sim.ProfileDefault); return c == d }},
		{what: "parameters override the profile", profile: sim.ProfileDefault,
			set: map[string]string{"max-num-seqs": "7", "step-base": "3ms", "eos-probability": "0.5"},
			check: func(c sim.Config) bool {
				return c.MaxNumSeqs == 7 && c.StepBase == 3*time.Millisecond && c.EOSProbability == 0.5
			}},
		{what: "an unknown profile is the only problem", profile: "huge", set: map[string]string{"max-num-seqs": "x"},
			want: []problem{{sim.FieldProfile, `sim profile "huge": unknown (known: default, latency, medium, throughput)`}}},
		{what: "the first unreadable parameter", profile: sim.ProfileDefault, set: map[string]string{"max-num-seqs": "x", "step-base": "0"},
			want: []problem{{"max-num-seqs", `sim parameter max-num-seqs="x": `}}},
		{what: "every problem of the result", profile: sim.ProfileDefault,
			set: map[string]string{"max-num-seqs": "0", "model-name": "", "error-rate": "0.6", "stall-rate": "0.6"},
			want: []problem{
				{"model-name", "must not be empty"},
				{"max-num-seqs", "0, must be at least 1"},
				{"", "error-rate + stall-rate + drop-rate: 1.2, must not exceed 1"},
			}},
	} {
		t.Run(tc.what, func(t *testing.T) {
			cfg, errs := sim.ConfigFrom(tc.profile, func(name string) (string, bool) { v, ok := tc.set[name]; return v, ok })
			if len(errs) != len(tc.want) {
				t.Fatalf("ConfigFrom: %d problems %q, want %d", len(errs), errs, len(tc.want))
			}
			for i, w := range tc.want {
				fe := field.Of(errs[i])
				switch {
				case w.name == "" && (fe != nil || errs[i].Error() != w.msg):
					t.Errorf("problem %d = %v, want the plain error %q", i, errs[i], w.msg)
				case w.name != "" && (fe == nil || fe.Name != w.name || len(fe.Msg) < len(w.msg) || fe.Msg[:len(w.msg)] != w.msg):
					t.Errorf("problem %d = %v, want a field error of %s starting %q", i, errs[i], w.name, w.msg)
				}
			}
			if tc.check != nil && !tc.check(cfg) {
				t.Errorf("ConfigFrom = %+v, not the configuration wanted", cfg)
			}
		})
	}
}

// TestValidateIsPlainText: a Config read from a file (a result's header) is judged by Validate,
// whose problems are its text alone, not settings a command would name by its flags.
func TestValidateIsPlainText(t *testing.T) {
	c, _ := sim.Profile(sim.ProfileDefault)
	c.MaxNumSeqs = 0
	err := c.Validate()
	if err == nil || err.Error() != "max-num-seqs: 0, must be at least 1" {
		t.Fatalf("Validate() = %v", err)
	}
	if field.Of(err) != nil {
		t.Errorf("Validate() carries a field.Error: %v", err)
	}
}
