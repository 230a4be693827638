package sim_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/internal/param"
	"github.com/loadcurve/loadcurve/loadgen/sim"
)

// TestConfigParams: the tunables are declared bound to the config, named as Params names them,
// their default said as the default profile's, whatever profile they are bound to.
func TestConfigParams(t *testing.T) {
	cfg, err := sim.Profile(sim.ProfileThroughput)
	if err != nil {
		t.Fatal(err)
	}
	ps := cfg.Params()
	flagStyle := sim.Params()
	if len(ps) != len(flagStyle) {
		t.Fatalf("%d params, want %d", len(ps), len(flagStyle))
	}
	for i, p := range ps {
		if p.Field != flagStyle[i].Name || p.DefaultText != flagStyle[i].Default+" in the default profile" {
			t.Errorf("param %d: %q (default %q), want %q (default %q in the default profile)", i, p.Field, p.DefaultText, flagStyle[i].Name, flagStyle[i].Default)
		}
	}
	set := map[string]string{"max-num-seqs": "7", "step-base": "3ms", "preempt": "false"}
	if errs := param.Apply(ps, func(name string) ([]string, bool) {
		if v, ok := set[name]; ok {
			return []string{v}, true
		}
		return nil, false
	}); len(errs) > 0 {
		t.Fatal(errs)
	}
	if cfg.MaxNumSeqs != 7 || cfg.StepBase != 3*time.Millisecond || cfg.Preempt || cfg.KVCacheTokens != 262144 {
		t.Errorf("config %+v: want the throughput profile with the three settings given", cfg)
	}
	if got := ps[1].Current(); got != "7" {
		t.Errorf("max-num-seqs reads %v, want 7", got)
	}
}

// TestConfigParamsRefuseByName: a text a tunable cannot read is a field.Error named by it.
func TestConfigParamsRefuseByName(t *testing.T) {
	cfg, _ := sim.Profile(sim.ProfileDefault)
	for _, p := range cfg.Params() {
		if p.Field == "model-name" {
			continue // any text is a name
		}
		err := p.Set("not-a-value")
		if fe := field.Of(err); fe == nil || fe.Name != p.Field || !strings.Contains(fe.Msg, `"not-a-value"`) {
			t.Errorf("%s: %v, want a field error naming it and quoting the text", p.Field, err)
		}
	}
}

// TestSettingsParams: the embedded deployment has three settings more, and the texts refer to
// the other settings by reference, for the command to name.
func TestSettingsParams(t *testing.T) {
	s := sim.DefaultSettings()
	if n, m := len(s.Params(false)), len(s.Params(true)); n != 2 || m != 5 {
		t.Errorf("%d and %d params, want 2 alone and 5 embedded", n, m)
	}
	name := func(f string) string { return "<" + f + ">" }
	var texts []string
	for _, p := range s.Params(true) {
		texts = append(texts, param.Render(p.Usage, name))
	}
	if !strings.Contains(texts[0], "see <profile>") || !strings.Contains(texts[0], "<queue>-*") || !strings.Contains(texts[4], "with <model> mdc") {
		t.Errorf("usages do not refer to the profile, the queue and the model:\n%s", strings.Join(texts, "\n"))
	}
	if got := s.Params(true)[2].Current(); got != 1 {
		t.Errorf("replicas default to %v, want 1", got)
	}
}

// TestSettingsCheck: every bad setting is refused at once, as a sentence naming its input; a
// served deployment (not embedded) has no clock, replicas or balancer to check.
func TestSettingsCheck(t *testing.T) {
	flag := func(n string) string { return "--sim-" + n }
	for _, tc := range []struct {
		name     string
		edit     func(*sim.Settings)
		embedded bool
		want     []string
	}{
		{"defaults", func(*sim.Settings) {}, true, nil},
		{"the queue", func(s *sim.Settings) { s.Model, s.Clock = sim.ModelMDC, sim.ClockVirtual }, true, nil},
		{"a model", func(s *sim.Settings) { s.Model = "queue" }, false,
			[]string{"--sim-model queue: want batching (a continuous-batching server) or mdc (an exact M/D/c queue)"}},
		{"served: no clock checked", func(s *sim.Settings) { s.Clock, s.Replicas = "fast", 0 }, false, nil},
		{"everything", func(s *sim.Settings) {
			s.Model, s.Clock, s.Replicas, s.Balance = "", "fast", sim.MaxReplicas+1, "least"
		}, true, []string{
			"--sim-model : want batching (a continuous-batching server) or mdc (an exact M/D/c queue)",
			"--sim-clock fast: want real or virtual",
			"--sim-replicas: want 1 to 256 replicas, got 257",
			`--sim-balance "least": want round-robin or random`}},
	} {
		s := sim.DefaultSettings()
		tc.edit(&s)
		var got []string
		for _, err := range s.Check(tc.embedded) {
			got = append(got, field.Of(err).Render(flag))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
