package sweep_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/internal/param"
	"github.com/loadcurve/loadcurve/measure"
)

func TestSettingsOrDefaults(t *testing.T) {
	none := result.Settings{}.OrDefaults()
	want, _ := measure.ParsePercentiles(measure.DefaultPercentiles)
	if !reflect.DeepEqual(none.Measure.Percentiles, want) || none.Measure.MaxScheduleLag != measure.DefaultMaxScheduleLag {
		t.Errorf("percentiles %v, lag %v", none.Measure.Percentiles, none.Measure.MaxScheduleLag)
	}
	if p := none.Params; p.TargetShare != curve.DefaultTargetShare || p.Confidence != curve.DefaultConfidence || p.Headroom != curve.DefaultHeadroom {
		t.Errorf("curve params %+v", p)
	}
	// A result that states its parameters keeps its headroom of zero: it is a choice.
	stated := result.Settings{Params: curve.Params{TargetShare: 0.9}}.OrDefaults()
	if stated.Params.Headroom != 0 || stated.Params.TargetShare != 0.9 {
		t.Errorf("stated params became %+v", stated.Params)
	}
}

func TestSettingsInputsOverABase(t *testing.T) {
	base := result.Settings{Measure: measure.Options{Percentiles: []float64{50}, Warmup: time.Second}, Params: curve.Params{TargetShare: 0.9}}
	tests := []struct {
		name  string
		given map[string][]string
		check func(t *testing.T, s result.Settings)
		errs  []string
	}{
		{"nothing given keeps the base", nil, func(t *testing.T, s result.Settings) {
			if !reflect.DeepEqual(s.Measure.Percentiles, []float64{50}) || s.Measure.Warmup != time.Second || s.Params.TargetShare != 0.9 || s.Params.Headroom != 0 {
				t.Errorf("settings %+v", s)
			}
		}, nil},
		{"what is given replaces it", map[string][]string{measure.FieldPercentiles: {"90,99"}, result.FieldWarmup: {"0s"}, result.FieldHeadroom: {"0.25"}, measure.FieldPercentileMetrics: {"ttft"}},
			func(t *testing.T, s result.Settings) {
				if !reflect.DeepEqual(s.Measure.Percentiles, []float64{90, 99}) || s.Measure.Warmup != 0 || s.Params.Headroom != 0.25 || !reflect.DeepEqual(s.Measure.Metrics, []string{"ttft"}) {
					t.Errorf("settings %+v", s)
				}
			}, nil},
		{"zeros given are refused, defaults are not", map[string][]string{result.FieldTargetShare: {"0"}, result.FieldConfidence: {"0"}, result.FieldMaxScheduleLag: {"0s"}, result.FieldCooldownWindow: {"-1s"}},
			nil, []string{"cool-down window: must be >= 0, got -1s", "schedule-lag floor: must be > 0, got 0s", "target-share: must be in (0, 1], got 0", "confidence: must be in (0, 1), got 0"}},
		{"curve's ranges", map[string][]string{result.FieldHeadroom: {"1"}}, nil, []string{"headroom: 1: must be in [0, 1), the fraction of capacity kept in reserve (e.g. 0.2)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := base.OrDefaults()
			ps := s.Inputs()
			if errs := param.Apply(ps, func(f string) ([]string, bool) { v, ok := tt.given[f]; return v, ok }); len(errs) > 0 {
				t.Fatal(errs)
			}
			got, errs := s.Check(ps)
			var texts []string
			for _, e := range errs {
				texts = append(texts, e.Error())
			}
			if strings.Join(texts, "\n") != strings.Join(tt.errs, "\n") {
				t.Errorf("errors %q, want %q", texts, tt.errs)
			}
			if tt.check != nil {
				tt.check(t, got)
			}
		})
	}
}

func TestSettingsInputsShowTheDefaults(t *testing.T) {
	s := result.DefaultSettings()
	ps := s.Inputs()
	if ps[0].Current() != measure.DefaultPercentiles || ps[1].Current() != "" {
		t.Errorf("percentiles shown %q, metrics %q", ps[0].Current(), ps[1].Current())
	}
	s.Measure.Percentiles = []float64{50, 99.9}
	if ps[0].Current() != "50,99.9" {
		t.Errorf("percentiles shown %q", ps[0].Current())
	}
}

func TestCheckBounded(t *testing.T) {
	if err := result.CheckBounded(measure.Options{Warmup: time.Second}); err != nil {
		t.Errorf("a warm-up window: %v", err)
	}
	err := result.CheckBounded(measure.Options{Cooldown: time.Second})
	if err == nil || !strings.HasPrefix(err.Error(), "bounded memory: cannot apply cool-down window:") {
		t.Errorf("a cool-down window: %v", err)
	}
}
