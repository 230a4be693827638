package runner_test

import (
	"testing"

	"github.com/loadcurve/loadcurve/loadgen/runner"
	"github.com/loadcurve/loadcurve/loadgen/sim"
)

// TestEmbed: the options start the deployment the settings picked, labelled as it is, on the
// settings' clock, replicas and balancer.
func TestEmbed(t *testing.T) {
	q := sim.DefaultQueueConfig()
	engine, err := sim.Profile(sim.ProfileDefault)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		settings sim.Settings
		d        sim.Deployment
		label    string
		virtual  bool
	}{
		{"engine", sim.DefaultSettings(), sim.Deployment{Profile: sim.ProfileDefault, Config: engine}, sim.ProfileDefault, false},
		{"queue, real", sim.Settings{Model: sim.ModelMDC, Clock: sim.ClockReal, Replicas: 3, Balance: sim.BalanceRoundRobin},
			sim.Deployment{Queue: &q}, q.String(), false},
		{"queue, virtual", sim.Settings{Model: sim.ModelMDC, Clock: sim.ClockVirtual, Replicas: 1}, sim.Deployment{Queue: &q}, q.String(), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var o runner.Options
			o.Embed(tc.settings, tc.d)
			if o.SimLabel != tc.label || o.Virtual != tc.virtual || o.Queue != tc.d.Queue || o.Sim.ModelName != tc.d.Config.ModelName {
				t.Errorf("label %q virtual %v queue %v model %q, want %q %v %v %q", o.SimLabel, o.Virtual, o.Queue, o.Sim.ModelName, tc.label, tc.virtual, tc.d.Queue, tc.d.Config.ModelName)
			}
			if o.SimReplicas != tc.settings.Replicas || o.SimBalance != tc.settings.Balance {
				t.Errorf("replicas %d balance %q, want %d %q", o.SimReplicas, o.SimBalance, tc.settings.Replicas, tc.settings.Balance)
			}
		})
	}
}
