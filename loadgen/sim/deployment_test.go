package sim_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/internal/param"
	"github.com/loadcurve/loadcurve/loadgen/sim"
)

// TestSettingsConfigure: the settings configure the server their model picks, the queue from
// its params as given or the profile with its tunables, and report what does not read or does
// not check as field errors named as in Params.
func TestSettingsConfigure(t *testing.T) {
	for _, tc := range []struct {
		name      string
		settings  sim.Settings
		given     map[string]string // by field: the queue's params, or the engine's tunables
		label     string            // the deployment's Label; "" when refused
		modelName string
		errField  string // the field of the one error, if any
	}{
		{"default engine", sim.DefaultSettings(), nil, sim.ProfileDefault, "", ""},
		{"engine's tunable", sim.DefaultSettings(), map[string]string{"model-name": "m1"}, sim.ProfileDefault, "m1", ""},
		{"bad engine tunable", sim.DefaultSettings(), map[string]string{"max-num-seqs": "lots"}, "", "", "max-num-seqs"},
		{"default queue", sim.Settings{Model: sim.ModelMDC}, nil, "mdc(c=4, D=400ms, first token 20ms, 16 tokens)", sim.DefaultQueueModelName, ""},
		{"queue given", sim.Settings{Model: sim.ModelMDC}, map[string]string{"queue-servers": "8", "queue-queue-limit": "3", "model-name": "q"},
			"mdc(c=8, D=400ms, first token 20ms, 16 tokens, queue limit 3)", "q", ""},
		{"queue unread", sim.Settings{Model: sim.ModelMDC}, map[string]string{"queue-servers": "four"}, "", "", "queue-servers"},
		{"queue checked", sim.Settings{Model: sim.ModelMDC}, map[string]string{"queue-servers": "0"}, "", "", "queue-servers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			apply := func(ps []param.Param) []error {
				return param.Apply(ps, func(name string) ([]string, bool) {
					if v, ok := tc.given[name]; ok {
						return []string{v}, true
					}
					return nil, false
				})
			}
			lookup := func(name string) (string, bool) { v, ok := tc.given[name]; return v, ok }
			d, errs := tc.settings.Configure(apply, lookup)
			if tc.errField != "" {
				if len(errs) != 1 || field.Of(errs[0]) == nil || field.Of(errs[0]).Name != tc.errField {
					t.Fatalf("errors %v, want one of field %s", errs, tc.errField)
				}
				return
			}
			if len(errs) > 0 {
				t.Fatalf("errors %v", errs)
			}
			if got := d.Label(); got != tc.label {
				t.Errorf("Label() = %q, want %q", got, tc.label)
			}
			if (d.Queue != nil) != (tc.settings.Model == sim.ModelMDC) {
				t.Errorf("Queue = %v for model %s", d.Queue, tc.settings.Model)
			}
			if tc.modelName != "" && d.ModelName() != tc.modelName {
				t.Errorf("ModelName() = %q, want %q", d.ModelName(), tc.modelName)
			}
		})
	}
}

// TestDeploymentStart: a configured deployment starts as a server that serves its model by
// name, and stops.
func TestDeploymentStart(t *testing.T) {
	q := sim.DefaultQueueConfig()
	q.ModelName = "queued"
	for _, d := range []sim.Deployment{
		{Profile: sim.ProfileDefault, Config: mustProfile(t, sim.ProfileDefault)},
		{Queue: &q},
	} {
		h, stop, err := d.Start()
		if err != nil {
			t.Fatalf("%s: %v", d.Label(), err)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/models", nil))
		body, _ := io.ReadAll(rec.Body)
		if rec.Code != http.StatusOK || !strings.Contains(string(body), d.ModelName()) {
			t.Errorf("%s: GET /v1/models = %d %s, want the model %q", d.Label(), rec.Code, body, d.ModelName())
		}
		stop()
	}
	bad := sim.DefaultQueueConfig()
	bad.Servers = 0
	if _, _, err := (sim.Deployment{Queue: &bad}).Start(); err == nil {
		t.Error("a queue of no servers started")
	}
}

func mustProfile(t *testing.T, name string) sim.Config {
	t.Helper()
	cfg, err := sim.Profile(name)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
