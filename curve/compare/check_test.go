package compare_test

import (
	"slices"
	"testing"

	"github.com/loadcurve/loadcurve/curve/compare"
)

func TestCheck(t *testing.T) {
	base := compare.Identity{
		Fingerprint: "sha256:3f2a", Schedule: "poisson rates=[1 2 4]", Seed: 42,
		CachePolicy: "cold", MetricsVersion: "1", Objectives: "ttft:500 tpot:50",
		Endpoint: "chat", MaxConcurrency: 64, NumRequests: 200,
	}
	with := func(f func(*compare.Identity)) compare.Identity { x := base; f(&x); return x }
	tests := []struct {
		name string
		b    compare.Identity
		want []compare.Mismatch
	}{
		{"identical", base, nil},
		{"fingerprint", with(func(x *compare.Identity) { x.Fingerprint = "sha256:9c41" }),
			[]compare.Mismatch{{compare.FieldFingerprint, "sha256:3f2a", "sha256:9c41"}}},
		{"schedule", with(func(x *compare.Identity) { x.Schedule = "gamma(0.5) rates=[1 2 4]" }),
			[]compare.Mismatch{{compare.FieldSchedule, "poisson rates=[1 2 4]", "gamma(0.5) rates=[1 2 4]"}}},
		{"seed", with(func(x *compare.Identity) { x.Seed = -7 }),
			[]compare.Mismatch{{compare.FieldSeed, "42", "-7"}}},
		{"cache policy", with(func(x *compare.Identity) { x.CachePolicy = "warm" }),
			[]compare.Mismatch{{compare.FieldCachePolicy, "cold", "warm"}}},
		{"metric version", with(func(x *compare.Identity) { x.MetricsVersion = "2" }),
			[]compare.Mismatch{{compare.FieldMetricsVersion, "1", "2"}}},
		{"objectives", with(func(x *compare.Identity) { x.Objectives = "ttft:200" }),
			[]compare.Mismatch{{compare.FieldObjectives, "ttft:500 tpot:50", "ttft:200"}}},
		{"endpoint", with(func(x *compare.Identity) { x.Endpoint = "completions" }),
			[]compare.Mismatch{{compare.FieldEndpoint, "chat", "completions"}}},
		{"max concurrency", with(func(x *compare.Identity) { x.MaxConcurrency = 0 }),
			[]compare.Mismatch{{compare.FieldMaxConcurrency, "64", "0"}}},
		{"number of requests", with(func(x *compare.Identity) { x.NumRequests = 100 }),
			[]compare.Mismatch{{compare.FieldNumRequests, "200", "100"}}},
		{"every field, in order", compare.Identity{Seed: 1},
			[]compare.Mismatch{
				{compare.FieldFingerprint, "sha256:3f2a", ""},
				{compare.FieldSchedule, "poisson rates=[1 2 4]", ""},
				{compare.FieldSeed, "42", "1"},
				{compare.FieldCachePolicy, "cold", ""},
				{compare.FieldMetricsVersion, "1", ""},
				{compare.FieldObjectives, "ttft:500 tpot:50", ""},
				{compare.FieldEndpoint, "chat", ""},
				{compare.FieldMaxConcurrency, "64", "0"},
				{compare.FieldNumRequests, "200", "0"},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := compare.Check(base, tt.b)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Check = %v, want %v", got, tt.want)
			}
			if tt.want == nil && got != nil {
				t.Errorf("Check = %#v, want nil", got)
			}
		})
	}
}

func TestMismatchString(t *testing.T) {
	tests := []struct {
		m    compare.Mismatch
		want string
	}{
		{compare.Mismatch{compare.FieldFingerprint, "3f2a", "9c41"}, "request-set fingerprint differs: A=3f2a, B=9c41"},
		{compare.Mismatch{compare.FieldCachePolicy, "cold", ""}, "cache policy differs: A=cold, B=(empty)"},
	}
	for _, tt := range tests {
		if got := tt.m.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}
