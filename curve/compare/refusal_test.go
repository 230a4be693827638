package compare_test

import (
	"errors"
	"testing"

	"github.com/loadcurve/loadcurve/curve/compare"
	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/measure/records"
)

// TestNotComparableRefusal: results measured differently are refused in a sentence naming both,
// counting the differences and naming the input that compares them anyway; it is still
// ErrNotComparable. With Force there is no refusal, only the stamp.
func TestNotComparableRefusal(t *testing.T) {
	a := build(header(records.CommandSweep, autoSweep, ""), tierSpec{2, 1, 100}, tierSpec{4, 1, 100})
	b := build(header(records.CommandSweep, autoSweep, ""), tierSpec{3, 1, 100}, tierSpec{5, 1, 100})
	for _, tc := range []struct {
		force bool
		want  string
		stamp string
	}{
		{false, "a and b are not comparable (1 differences above); --force compares them anyway, stamped NOT COMPARABLE", ""},
		{true, "", "NOT COMPARABLE (1 differences)"},
	} {
		res, err := compare.Results(side("A", a), side("B", b), compare.Options{Force: tc.force})
		if res.Stamp != tc.stamp {
			t.Errorf("force %v: stamp %q, want %q", tc.force, res.Stamp, tc.stamp)
		}
		if tc.want == "" {
			if err != nil {
				t.Errorf("force %v: %v, want no refusal", tc.force, err)
			}
			continue
		}
		fe := field.Of(err)
		if fe == nil || fe.Name != compare.FieldForce || !errors.Is(err, compare.ErrNotComparable) {
			t.Fatalf("force %v: %v, want a field error on %s that is ErrNotComparable", tc.force, err, compare.FieldForce)
		}
		if got := fe.Render(func(n string) string { return "--" + n }); got != tc.want || err.Error() != fe.Error() {
			t.Errorf("force %v: %q (reads %q), want %q", tc.force, got, err, tc.want)
		}
	}
}
