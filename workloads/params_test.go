package workloads_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/internal/param"
	"github.com/loadcurve/loadcurve/workloads"
)

func TestSettingsParamsDeclareEachFieldOnce(t *testing.T) {
	s := workloads.DefaultSettings()
	seen := map[string]bool{}
	for _, p := range s.Params() {
		if seen[p.Field] {
			t.Errorf("%s declared twice", p.Field)
		}
		seen[p.Field] = true
		if p.Usage == "" {
			t.Errorf("%s has no usage", p.Field)
		}
	}
	for _, f := range []string{workloads.FieldWorkload, workloads.FieldCache, workloads.FieldInputLen, workloads.FieldThink, workloads.FieldMultiTurn} {
		if !seen[f] {
			t.Errorf("%s not declared", f)
		}
	}
}

func TestSettingsLoadOptions(t *testing.T) {
	tests := []struct {
		name  string
		given map[string][]string
		check func(t *testing.T, s workloads.Settings, o workloads.LoadOptions)
	}{
		{"defaults validate and share the output length", nil, func(t *testing.T, s workloads.Settings, o workloads.LoadOptions) {
			if s.Spec != workloads.KindSynthetic || s.Cache != "" || o.TimeScale != 1 {
				t.Errorf("spec %q cache %q scale %v", s.Spec, s.Cache, o.TimeScale)
			}
			if o.SharedPrefix.OutputLen != workloads.DefaultOutputLen {
				t.Errorf("shared-prefix output length %d, want %d", o.SharedPrefix.OutputLen, workloads.DefaultOutputLen)
			}
			for _, errs := range [][]error{o.Synthetic.Validate(), o.SharedPrefix.Validate()} {
				if len(errs) > 0 {
					t.Errorf("defaults invalid: %v", errs)
				}
			}
		}},
		{"one output length for every generated kind", map[string][]string{workloads.FieldOutputLen: {"7"}}, func(t *testing.T, _ workloads.Settings, o workloads.LoadOptions) {
			if o.Synthetic.OutputLen != 7 || o.SharedPrefix.OutputLen != 7 {
				t.Errorf("output lengths %d, %d, want 7", o.Synthetic.OutputLen, o.SharedPrefix.OutputLen)
			}
		}},
		{"the think time reaches ShareGPT only multi-turn", map[string][]string{workloads.FieldThink: {"2s"}}, func(t *testing.T, _ workloads.Settings, o workloads.LoadOptions) {
			if o.Sessions.Think != 2*time.Second || o.ShareGPT.Think != 0 {
				t.Errorf("think %v, ShareGPT's %v; want 2s, 0", o.Sessions.Think, o.ShareGPT.Think)
			}
		}},
		{"multi-turn ShareGPT thinks as sessions do", map[string][]string{workloads.FieldThink: {"2s"}, workloads.FieldMultiTurn: {"true"}}, func(t *testing.T, _ workloads.Settings, o workloads.LoadOptions) {
			if !o.ShareGPT.MultiTurn || o.ShareGPT.Think != 2*time.Second {
				t.Errorf("ShareGPT %+v, want multi-turn with 2s", o.ShareGPT)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := workloads.DefaultSettings()
			if errs := param.Apply(s.Params(), func(f string) ([]string, bool) { v, ok := tt.given[f]; return v, ok }); len(errs) > 0 {
				t.Fatal(errs)
			}
			before := s
			o := s.LoadOptions()
			if !reflect.DeepEqual(s, before) {
				t.Error("LoadOptions changed the settings")
			}
			tt.check(t, s, o)
		})
	}
}
