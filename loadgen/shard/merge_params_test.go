package shard_test

import (
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/internal/param"
	"github.com/loadcurve/loadcurve/loadgen/shard"
	"github.com/loadcurve/loadcurve/measure"
)

// TestMergeSettingsParams: what is not given keeps the checks' defaults, what is given is read,
// and a duration that does not parse is an error naming its setting.
func TestMergeSettingsParams(t *testing.T) {
	tests := []struct {
		name  string
		given map[string][]string
		want  shard.MergeSettings
		bad   string
	}{
		{"defaults", nil, shard.MergeSettings{Options: shard.Options{MaxAnchorSpread: shard.DefaultMaxAnchorSpread, MaxScheduleLag: measure.DefaultMaxScheduleLag}}, ""},
		{"given", map[string][]string{shard.FieldOut: {"m"}, shard.FieldReplace: {"true"}, shard.FieldMaxAnchorSpread: {"50ms"}, shard.FieldMaxScheduleLag: {"1s"}},
			shard.MergeSettings{Out: "m", Replace: true, Options: shard.Options{MaxAnchorSpread: 50 * time.Millisecond, MaxScheduleLag: time.Second}}, ""},
		{"not a duration", map[string][]string{shard.FieldMaxAnchorSpread: {"soon"}},
			shard.MergeSettings{Options: shard.Options{MaxAnchorSpread: shard.DefaultMaxAnchorSpread, MaxScheduleLag: measure.DefaultMaxScheduleLag}}, shard.FieldMaxAnchorSpread},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := shard.DefaultMergeSettings()
			errs := param.Apply(s.Params(), func(f string) ([]string, bool) { v, ok := tt.given[f]; return v, ok })
			switch {
			case tt.bad == "" && len(errs) > 0:
				t.Fatalf("errors %v", errs)
			case tt.bad != "" && (len(errs) != 1 || field.Of(errs[0]) == nil || field.Of(errs[0]).Name != tt.bad):
				t.Fatalf("errors %v, want one on %s", errs, tt.bad)
			}
			if s != tt.want {
				t.Errorf("settings %+v, want %+v", s, tt.want)
			}
		})
	}
}
