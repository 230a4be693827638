package report_test

import (
	"math"
	"testing"

	"github.com/loadcurve/loadcurve/curve/report"
)

func TestFormatFloat(t *testing.T) {
	tests := []struct {
		v      float64
		digits int
		want   string
	}{
		{1234.5678, 2, "1234.57"},
		{1234.5678, 0, "1235"},
		{0.5, 0, "0"}, // round half to even, as strconv does
		{1.5, 0, "2"},
		{2, 3, "2.000"},
		{-3.14159, 1, "-3.1"},
		{-0.001, 2, "0.00"}, // rounds to zero: no minus sign
		{math.Copysign(0, -1), 1, "0.0"},
		{0.1, -1, "0.1"}, // shortest representation that reads back
		{1e21, -1, "1000000000000000000000"},
		{math.Inf(1), 2, "inf"},
		{math.Inf(-1), 2, "-inf"},
		{math.NaN(), 2, "—"},
	}
	for _, tt := range tests {
		if got := report.FormatFloat(tt.v, tt.digits); got != tt.want {
			t.Errorf("FormatFloat(%v, %d) = %q, want %q", tt.v, tt.digits, got, tt.want)
		}
	}
}
