package sweep_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// throughHeader writes settings into a records header, encodes the header as records.jsonl's
// first line holds it, decodes it and reads the settings back: the path report, compare and cost
// take to reproduce a result from the records alone.
func throughHeader(t *testing.T, s result.Settings) (result.Settings, []string) {
	t.Helper()
	h := records.Header{Kind: records.KindHeader, Tool: "loadcurve", Command: records.CommandRun, Settings: s.Record()}
	b, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var back records.Header
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	got, notes, err := result.SettingsOf(back)
	if err != nil {
		t.Fatalf("SettingsOf(%s): %v", b, err)
	}
	return got, notes
}

// TestSettingsRoundTripThroughTheHeader: every setting a result is derived from survives the
// records header, a zero headroom included (it means "no headroom", not "the default"). Before
// the redesign a run's settings were only in summary.json, so report, compare and cost of a run
// recomputed it without its objectives.
func TestSettingsRoundTripThroughTheHeader(t *testing.T) {
	obj, err := measure.ParseGoodput([]string{"ttft:500 tpot:50 e2el_including_client_queue:20000"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		in   result.Settings
	}{
		{"everything set", result.Settings{
			Measure: measure.Options{Objectives: obj, Percentiles: []float64{50, 99.9}, Metrics: []string{"ttft", "itl"},
				Warmup: 2500 * time.Millisecond, Cooldown: 400 * time.Millisecond, MaxScheduleLag: 7 * time.Millisecond},
			Params: curve.Params{TargetShare: 0.95, Headroom: 0.3, Confidence: 0.9, PlateauGain: 0.1}}},
		{"headroom 0", result.Settings{
			Measure: measure.Options{Objectives: obj, Percentiles: []float64{99}, MaxScheduleLag: measure.DefaultMaxScheduleLag},
			Params:  curve.Params{TargetShare: 0.5, Headroom: 0, Confidence: 0.99, PlateauGain: 0.02}}},
		{"no objectives", result.Settings{
			Measure: measure.Options{Percentiles: []float64{90}, MaxScheduleLag: time.Millisecond},
			Params:  curve.DefaultParams()}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, notes := throughHeader(t, tc.in)
			if len(notes) != 0 {
				t.Errorf("notes for a header with settings: %q", notes)
			}
			if got.Measure.Objectives != tc.in.Measure.Objectives {
				t.Errorf("objectives %q, want %q", got.Measure.Objectives, tc.in.Measure.Objectives)
			}
			if got.Params.Headroom != tc.in.Params.Headroom {
				t.Errorf("headroom %v, want %v", got.Params.Headroom, tc.in.Params.Headroom)
			}
			if !reflect.DeepEqual(got, tc.in) {
				t.Errorf("round trip through the header:\n got %+v\nwant %+v", got, tc.in)
			}
		})
	}
}

// TestSettingsRecordFillsTheDefaults: the header states the values a result was made with, so a
// zero setting is written as the default it stood for (a zero headroom stays 0: it is a value).
func TestSettingsRecordFillsTheDefaults(t *testing.T) {
	r := result.Settings{}.Record()
	want := records.Settings{
		Objectives: "", Percentiles: []float64{50, 90, 95, 99}, MaxScheduleLagMs: 5,
		TargetShare: 0.99, Headroom: 0, Confidence: 0.95, PlateauGain: 0.05,
	}
	if !reflect.DeepEqual(*r, want) {
		t.Errorf("Settings{}.Record() = %+v\nwant %+v", *r, want)
	}
	if !slices.Equal(r.Percentiles, measure.DefaultPercentileList()) {
		t.Errorf("percentiles %v, want the default list %v", r.Percentiles, measure.DefaultPercentileList())
	}
	// The defaults' record keeps the default headroom.
	if d := result.DefaultSettings().Record(); d.Headroom != curve.DefaultHeadroom || d.TargetShare != curve.DefaultTargetShare ||
		d.Confidence != curve.DefaultConfidence || d.PlateauGain != curve.DefaultPlateauGain {
		t.Errorf("DefaultSettings().Record() = %+v", *d)
	}
	// What an empty Settings records reads back as the values it stood for.
	got, _ := throughHeader(t, result.Settings{})
	if got.Params != (curve.Params{TargetShare: 0.99, Confidence: 0.95, PlateauGain: 0.05}) ||
		!slices.Equal(got.Measure.Percentiles, []float64{50, 90, 95, 99}) || got.Measure.MaxScheduleLag != measure.DefaultMaxScheduleLag {
		t.Errorf("empty settings read back as %+v", got)
	}
}

// TestSettingsOfAHeaderWithout: a file of an older loadcurve states no settings: the defaults,
// and a note that says so; settings that do not parse are an error naming the setting.
func TestSettingsOfAHeaderWithout(t *testing.T) {
	s, notes, err := result.SettingsOf(records.Header{Kind: records.KindHeader, Command: records.CommandSweep})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s, result.DefaultSettings()) {
		t.Errorf("settings of a header without any: %+v, want the defaults %+v", s, result.DefaultSettings())
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "settings") {
		t.Errorf("notes %q: want one saying the header states no settings", notes)
	}

	for _, tc := range []struct {
		name string
		rs   records.Settings
		want string
	}{
		{"objectives", records.Settings{Objectives: "latency:5", TargetShare: 0.99, Confidence: 0.95, PlateauGain: 0.05}, "objectives"},
		{"target share", records.Settings{TargetShare: 1.5, Confidence: 0.95, PlateauGain: 0.05}, "target-share"},
		{"headroom", records.Settings{TargetShare: 0.99, Headroom: 1, Confidence: 0.95, PlateauGain: 0.05}, "headroom"},
	} {
		rs := tc.rs
		if _, _, err := result.SettingsOf(records.Header{Settings: &rs}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want one naming %q", tc.name, err, tc.want)
		}
	}
}
