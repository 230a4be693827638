package cost_test

import (
	"slices"
	"testing"

	"github.com/loadcurve/loadcurve/curve/cost"
	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/internal/param"
)

func TestSideField(t *testing.T) {
	s := cost.NewSide("B")
	for in, want := range map[string]string{cost.FieldResult: "b", cost.FieldTier: "b-tier", cost.FieldCostPerHour: "b-cost-per-hour"} {
		if got := s.Field(in); got != want {
			t.Errorf("Field(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSideCheck: the cost is always required; the figures are unless a result gives them, and
// a result with figures too is refused.
func TestSideCheck(t *testing.T) {
	for _, tc := range []struct {
		name    string
		given   map[string]string
		refused []string // the fields refused, in order
		tier    int
	}{
		{name: "nothing", refused: []string{"a-cost-per-hour", "a-raw-throughput", "a-compliant-share"}, tier: -1},
		{name: "figures", given: map[string]string{"a-cost-per-hour": "0", "a-raw-throughput": "10", "a-compliant-share": "1"}, tier: -1},
		{name: "result", given: map[string]string{"a-cost-per-hour": "3", "a": "dir", "a-tier": "2"}, tier: 2},
		{name: "result without cost", given: map[string]string{"a": "dir"}, refused: []string{"a-cost-per-hour"}, tier: -1},
		{name: "result and a figure", given: map[string]string{"a-cost-per-hour": "3", "a": "dir", "a-compliant-share": "0.5"}, refused: []string{"a"}, tier: -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := cost.NewSide("A")
			ps := s.Params()
			if errs := param.Apply(ps, func(name string) ([]string, bool) {
				if v, ok := tc.given[name]; ok {
					return []string{v}, true
				}
				return nil, false
			}); len(errs) > 0 {
				t.Fatal(errs)
			}
			var refused []string
			for _, err := range s.Check(ps) {
				refused = append(refused, field.Of(err).Name)
			}
			if !slices.Equal(refused, tc.refused) {
				t.Errorf("refused %v, want %v", refused, tc.refused)
			}
			if s.Tier != tc.tier {
				t.Errorf("tier %d, want %d", s.Tier, tc.tier)
			}
		})
	}
}

// TestSideParamsRefer: the usages refer to the side's own result and tier, which a command names.
func TestSideParamsRefer(t *testing.T) {
	s := cost.NewSide("A")
	name := func(f string) string { return "<" + f + ">" }
	var usages []string
	for _, p := range s.Params() {
		usages = append(usages, param.Render(p.Usage, name))
	}
	if want := "A's raw output throughput, tok/s (or from <a>)"; usages[1] != want {
		t.Errorf("usage %q, want %q", usages[1], want)
	}
	if want := "with <a>: use this tier's steady-state figures instead"; usages[5] != want {
		t.Errorf("usage %q, want %q", usages[5], want)
	}
}

func TestParamsInputs(t *testing.T) {
	p := cost.DefaultParams()
	ps := p.Inputs()
	if errs := param.Apply(ps, func(name string) ([]string, bool) {
		if name == cost.FieldOneTime {
			return []string{"-5"}, true
		}
		return nil, false
	}); len(errs) > 0 {
		t.Fatal(errs)
	}
	errs := p.Validate()
	if p.HoursPerPeriod != cost.DefaultHoursPerPeriod || len(errs) != 1 || field.Of(errs[0]).Name != cost.FieldOneTime {
		t.Errorf("hours %v, errors %v: want the default period and the one-time investment refused", p.HoursPerPeriod, errs)
	}
}

// TestSideCheckBothSaysWhichInputs: a result with figures too is refused in one sentence naming
// the three inputs as the reader knows them.
func TestSideCheckBothSaysWhichInputs(t *testing.T) {
	s := cost.NewSide("B")
	ps := s.Params()
	given := map[string]string{"b-cost-per-hour": "1", "b": "dir", "b-raw-throughput": "5"}
	param.Apply(ps, func(name string) ([]string, bool) {
		if v, ok := given[name]; ok {
			return []string{v}, true
		}
		return nil, false
	})
	errs := s.Check(ps)
	flag := func(f string) string { return "--" + f }
	if len(errs) != 1 || field.Of(errs[0]).Render(flag) != "give --b or --b-raw-throughput/--b-compliant-share, not both" {
		t.Errorf("Check = %v", errs)
	}
}
