package cost_test

import (
	"strings"
	"testing"

	"github.com/loadcurve/loadcurve/curve/cost"
	"github.com/loadcurve/loadcurve/internal/field"
)

// TestCheckFigures: every bad figure of a side's option is a field sentence on the side's
// setting, naming it as its user gives it; good figures are no error.
func TestCheckFigures(t *testing.T) {
	flag := func(n string) string { return "--" + n }
	for _, tc := range []struct {
		side string
		o    cost.Option
		want []string
	}{
		{"A", cost.Option{CostPerHour: 1, RawThroughput: 10, CompliantShare: 0.5}, nil},
		{"A", cost.Option{CostPerHour: -1, RawThroughput: 1, CompliantShare: 1.5}, []string{
			"--a-cost-per-hour = -1: must be a finite number ≥ 0",
			"--a-compliant-share = 1.5: must be a token share between 0 and 1 (0.95 means 95 %)"}},
		{"B", cost.Option{CostPerHour: 1, RawThroughput: 0, CompliantShare: 1, Maintenance: -2}, []string{
			"--b-raw-throughput = 0: must be a finite number of tokens per second > 0",
			"--b-maintenance = -2: must be a finite number ≥ 0"}},
	} {
		s := cost.NewSide(tc.side)
		var got []string
		for _, err := range s.CheckFigures(tc.o) {
			fe := field.Of(err)
			if fe == nil || !strings.HasPrefix(fe.Name, strings.ToLower(tc.side)+"-") {
				t.Fatalf("%s: %v is not a field error on one of its settings", tc.side, err)
			}
			got = append(got, fe.Render(flag))
		}
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s %+v:\n%s\nwant\n%s", tc.side, tc.o, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
		}
	}
}
