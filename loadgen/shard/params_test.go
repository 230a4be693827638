package shard_test

import (
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/internal/param"
	"github.com/loadcurve/loadcurve/loadgen/shard"
)

func TestSettingsParams(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		given   map[string][]string
		want    shard.Settings
		errs    int
		missing bool
	}{
		{"the whole run", nil, shard.Settings{}, 0, false},
		{"empty texts are none", map[string][]string{shard.FieldShard: {""}, shard.FieldStartAt: {""}}, shard.Settings{}, 0, false},
		{"a shard with its start", map[string][]string{shard.FieldShard: {"1/3"}, shard.FieldStartAt: {"2026-05-01T12:00:30Z"}},
			shard.Settings{Spec: shard.Spec{Index: 1, Count: 3}, StartAt: now.Add(30 * time.Second)}, 0, false},
		{"a shard of several without a start", map[string][]string{shard.FieldShard: {"0/2"}}, shard.Settings{Spec: shard.Spec{Count: 2}}, 0, true},
		{"the one shard of one needs no start", map[string][]string{shard.FieldShard: {"0/1"}}, shard.Settings{Spec: shard.Spec{Count: 1}}, 0, false},
		{"texts that do not parse", map[string][]string{shard.FieldShard: {"x"}, shard.FieldStartAt: {"noon"}}, shard.Settings{}, 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s shard.Settings
			errs := param.Apply(s.Params(func() time.Time { return now }), func(f string) ([]string, bool) { v, ok := tt.given[f]; return v, ok })
			if len(errs) != tt.errs {
				t.Fatalf("errors %v, want %d", errs, tt.errs)
			}
			if !s.StartAt.Equal(tt.want.StartAt) || s.Spec != tt.want.Spec || s.MissingStartAt() != tt.missing {
				t.Errorf("settings %+v (missing start %v), want %+v (%v)", s, s.MissingStartAt(), tt.want, tt.missing)
			}
		})
	}
}

func TestSettingsParamsShowTheirValues(t *testing.T) {
	s := shard.Settings{Spec: shard.Spec{Index: 2, Count: 4}, StartAt: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	ps := s.Params(time.Now)
	if ps[0].Current() != "2/4" || ps[1].Current() != "2026-05-01T12:00:00Z" {
		t.Errorf("shown %v, %v", ps[0].Current(), ps[1].Current())
	}
	var none shard.Settings
	if ps := none.Params(time.Now); ps[0].Current() != "" || ps[1].Current() != "" {
		t.Errorf("none shown %q, %q", ps[0].Current(), ps[1].Current())
	}
}

// TestSettingsCheck: shards of a run need a common start; one shard of one, the whole run, or
// shards with a start pass.
func TestSettingsCheck(t *testing.T) {
	start := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		s    shard.Settings
		want string
	}{
		{shard.Settings{}, ""},
		{shard.Settings{Spec: shard.Spec{Index: 0, Count: 1}}, ""},
		{shard.Settings{Spec: shard.Spec{Index: 1, Count: 2}, StartAt: start}, ""},
		{shard.Settings{Spec: shard.Spec{Index: 1, Count: 2}}, "SHARD needs START TIME: the shards must share one T0 for their union to be the planned schedule"},
	} {
		var got string
		if errs := tt.s.Check(); len(errs) > 0 {
			got = field.Of(errs[0]).Render(strings.ToUpper)
		}
		if got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.s, got, tt.want)
		}
	}
}
