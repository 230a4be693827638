package bench_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/internal/bench"
	"github.com/loadcurve/loadcurve/internal/field"
	"github.com/loadcurve/loadcurve/internal/param"
)

// TestSettingsOptions: the settings start from the full or the quick run, the user's values go
// on top, and the lists are read from their texts.
func TestSettingsOptions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		quick bool
		given map[string]string
		rates []float64
		caps  []int
		dur   time.Duration
		bad   []string // the fields of the list errors, in order
	}{
		{name: "full", rates: []float64{250, 500, 1000}, caps: []int{0}, dur: 10 * time.Second},
		{name: "quick", quick: true, rates: []float64{100, 200}, caps: []int{0}, dur: time.Second},
		{name: "quick, rates given", quick: true, given: map[string]string{bench.FieldRates: "7.5", bench.FieldDuration: "3s"},
			rates: []float64{7.5}, caps: []int{0}, dur: 3 * time.Second},
		{name: "caps given", given: map[string]string{bench.FieldConcurrency: "0, 64"}, rates: []float64{250, 500, 1000}, caps: []int{0, 64}, dur: 10 * time.Second},
		{name: "bad lists", given: map[string]string{bench.FieldRates: "1,x", bench.FieldConcurrency: "a,2,b"},
			caps: []int{2}, dur: 10 * time.Second, bad: []string{bench.FieldRates, bench.FieldConcurrency, bench.FieldConcurrency}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := bench.NewSettings(tc.quick)
			ps := s.Params()
			if errs := param.Apply(ps, func(name string) ([]string, bool) {
				if v, ok := tc.given[name]; ok {
					return []string{v}, true
				}
				return nil, false
			}); len(errs) > 0 {
				t.Fatal(errs)
			}
			o, errs := s.Options()
			if !slices.Equal(o.Rates, tc.rates) || !slices.Equal(o.Concurrencies, tc.caps) || o.Duration != tc.dur {
				t.Errorf("options: rates %v, caps %v, duration %v; want %v, %v, %v", o.Rates, o.Concurrencies, o.Duration, tc.rates, tc.caps, tc.dur)
			}
			var got []string
			for _, err := range errs {
				got = append(got, field.Of(err).Name)
				if r := field.Of(err).Render(func(f string) string { return "<" + f + ">" }); !strings.HasPrefix(r, "<"+field.Of(err).Name+"> "+tc.given[field.Of(err).Name]+": ") {
					t.Errorf("%q does not name its list with the list's text", r)
				}
			}
			if !slices.Equal(got, tc.bad) {
				t.Errorf("errors name %v, want %v (%v)", got, tc.bad, errs)
			}
		})
	}
}

// TestSettingsDefaults: the params' defaults, which a command shows, are the full run's.
func TestSettingsDefaults(t *testing.T) {
	s := bench.NewSettings(false)
	want := map[string]any{bench.FieldQuick: false, bench.FieldRates: "250,500,1000", bench.FieldConcurrency: "0",
		bench.FieldDuration: 10 * time.Second, bench.FieldSeed: int64(1), bench.FieldFormat: bench.FormatTable}
	for _, p := range s.Params() {
		if w, ok := want[p.Field]; ok && p.Current() != w {
			t.Errorf("%s defaults to %v, want %v", p.Field, p.Current(), w)
		}
		delete(want, p.Field)
	}
	if len(want) > 0 {
		t.Errorf("no params for %v", want)
	}
}

func TestCheckFormat(t *testing.T) {
	for _, tc := range []struct {
		format string
		ok     bool
	}{{bench.FormatTable, true}, {bench.FormatJSON, true}, {"csv", false}, {"", false}} {
		s := bench.Settings{Format: tc.format}
		err := s.CheckFormat()
		if fe := field.Of(err); (err == nil) != tc.ok || (err != nil && fe.Name != bench.FieldFormat) {
			t.Errorf("CheckFormat(%q) = %v, want ok %v", tc.format, err, tc.ok)
		}
	}
}

func TestWriteJSONFile(t *testing.T) {
	dir := t.TempDir()
	rep := &bench.Report{Options: bench.ReportOptions{Rates: []float64{5}}}
	path := filepath.Join(dir, "bench.json")
	if err := rep.WriteJSONFile(path); err != nil {
		t.Fatal(err)
	}
	var back bench.Report
	if b, err := os.ReadFile(path); err != nil || json.Unmarshal(b, &back) != nil || !slices.Equal(back.Options.Rates, []float64{5}) {
		t.Errorf("read back %+v (%v)", back.Options, err)
	}
	err := rep.WriteJSONFile(filepath.Join(dir, "missing", "bench.json"))
	if fe := field.Of(err); fe == nil || fe.Name != bench.FieldJSON {
		t.Errorf("a file that cannot be created: %v, want a field error naming %q", err, bench.FieldJSON)
	}
}
