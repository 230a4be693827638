package arrival_test

import (
	"math"
	"testing"

	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/internal/field"
)

// One type owns burstiness: its parsing, validity, default and text. Equal values read back as
// equal text however they were written (issue 24: "--burstiness 1" and "--burstiness 1.0" once
// made two schedules).
func TestBurstinessOwnsItsRules(t *testing.T) {
	tests := []struct {
		in   string
		want arrival.Burstiness
		text string
		bad  bool
	}{
		{in: "1", want: 1, text: "1"},
		{in: "1.0", want: 1, text: "1"},
		{in: " 0.50 ", want: 0.5, text: "0.5"},
		{in: "1e0", want: 1, text: "1"},
		{in: "inf", want: arrival.Burstiness(math.Inf(1)), text: "inf"},
		{in: "INF", want: arrival.Burstiness(math.Inf(1)), text: "inf"},
		{in: "0", bad: true},
		{in: "-1", bad: true},
		{in: "NaN", bad: true},
		{in: "-inf", bad: true},
		{in: "", bad: true},
		{in: "bursty", bad: true},
	}
	for _, tt := range tests {
		got, err := arrival.ParseBurstiness(tt.in)
		if tt.bad {
			if fe := field.Of(err); fe == nil || fe.Name != arrival.FieldBurstiness {
				t.Errorf("ParseBurstiness(%q) = %v, %v; want a field error naming %q", tt.in, got, err, arrival.FieldBurstiness)
			}
			continue
		}
		if err != nil || got != tt.want || got.String() != tt.text || got.Validate() != nil {
			t.Errorf("ParseBurstiness(%q) = %v (%q), %v; want %v (%q)", tt.in, got, got.String(), err, tt.want, tt.text)
		}
		if back, err := arrival.ParseBurstiness(got.String()); err != nil || back != got {
			t.Errorf("ParseBurstiness(%q) = %v, %v; want %v back", got.String(), back, err, got)
		}
	}
	for _, b := range []arrival.Burstiness{0, -1, arrival.Burstiness(math.NaN()), arrival.Burstiness(math.Inf(-1))} {
		if fe := field.Of(b.Validate()); fe == nil || fe.Name != arrival.FieldBurstiness {
			t.Errorf("Burstiness(%v).Validate() = %v, want a field error", b, b.Validate())
		}
	}
	if arrival.Burstiness(0).OrDefault() != arrival.DefaultBurstiness || arrival.Burstiness(0.5).OrDefault() != 0.5 {
		t.Error("OrDefault: zero takes the default, anything else stays")
	}
}

func TestParseRate(t *testing.T) {
	for in, want := range map[string]float64{"4": 4, "0.25": 0.25, "inf": math.Inf(1), " Inf": math.Inf(1)} {
		if got, err := arrival.ParseRate(in); err != nil || got != want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"0", "-2", "fast", "nan", ""} {
		if _, err := arrival.ParseRate(in); field.Of(err) == nil || field.Of(err).Name != arrival.FieldRate {
			t.Errorf("ParseRate(%q) error %v: want a field error naming %q", in, err, arrival.FieldRate)
		}
	}
}
